//go:build integration

package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

// capacityConfig is the integration tests' configuration with the capacity
// plugin and hierarchical queues in place of proportion.
var capacityConfig = strings.Replace(framework.SchedulerConfig,
	"  - name: proportion\n", "  - name: capacity\n    enableHierarchy: true\n", 1)

// TestChildQueueBorrowsAndGivesBack: a department capped at 20 cores has
// two teams deserving 10 each. While team-b is idle, team-a borrows its
// share and runs 20 pods. When team-b then asks, and team-a asks for more
// too, room freed by team-a's finishing pods goes to team-b up to its
// deserved 10 first: team-a stops at its own 10 and keeps the rest
// pending. Nothing is evicted (reclaim is not enabled): the lent cores come
// back as the borrower's pods finish.
func TestChildQueueBorrowsAndGivesBack(t *testing.T) {
	const ns = "borrow"
	createNamespace(t, ns)
	labelledNodes(t, ns, 4, "5")
	cores := func(n string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}
	}
	createQueue(t, &schedulingv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: "borrow-dept"},
		Spec:       schedulingv1beta1.QueueSpec{Weight: 1, Capability: cores("20"), Deserved: cores("20")},
	})
	for _, team := range []string{"borrow-team-a", "borrow-team-b"} {
		createQueue(t, &schedulingv1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: team},
			Spec:       schedulingv1beta1.QueueSpec{Weight: 1, Parent: "borrow-dept", Deserved: cores("10")},
		})
	}
	// The first wave runs long enough to be seen holding all 20 cores.
	const wave = 8 * time.Second
	for i := range 20 {
		createPod(t, ns, fmt.Sprintf("a-first-%02d", i), map[string]string{
			schedulingv1beta1.QueueNameAnnotation: "borrow-team-a",
			"pod.caldera.sh/run-duration":         wave.String(),
		}, podSpec(ns, "1"))
	}
	if !strings.Contains(capacityConfig, "enableHierarchy") {
		t.Fatal("the capacity configuration does not name the capacity plugin")
	}
	explained := fw.StartSchedulerExplained(t, capacityConfig)

	// running counts the bound pods that have not finished, per queue.
	running := func() map[string]int {
		out := map[string]int{}
		for _, p := range listPods(t, ns) {
			if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				out[p.Annotations[schedulingv1beta1.QueueNameAnnotation]]++
			}
		}
		return out
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "team-a borrows team-b's idle share", func() (bool, string) {
		got := running()
		return got["borrow-team-a"] == 20, fmt.Sprint(got)
	})

	// pendingJobs names the jobs of the pods not bound.
	pendingJobs := func() []string {
		var out []string
		for _, p := range listPods(t, ns) {
			if p.Spec.NodeName == "" {
				out = append(out, podJob(p))
			}
		}
		return out
	}

	// Both teams now ask for more than their deserved amount.
	asked := time.Now()
	for i := range 20 {
		createPod(t, ns, fmt.Sprintf("a-second-%02d", i), map[string]string{
			schedulingv1beta1.QueueNameAnnotation: "borrow-team-a",
		}, podSpec(ns, "1"))
	}
	for i := range 15 {
		createPod(t, ns, fmt.Sprintf("b-%02d", i), map[string]string{
			schedulingv1beta1.QueueNameAnnotation: "borrow-team-b",
		}, podSpec(ns, "1"))
	}
	// The department is full until the first wave ends: nothing new runs.
	// Every new pod is judged, and left pending, by a cycle that saw it.
	if jobs := pendingJobs(); len(jobs) != 35 {
		t.Fatalf("%d pods pending before the scheduler judged the new ones, want the 35 new ones", len(jobs))
	} else {
		explained.JudgedSince(t, 30*time.Second, asked, jobs...)
	}
	if got := running(); got["borrow-team-b"] != 0 || got["borrow-team-a"] != 20 {
		t.Fatalf("before the first wave ends, running pods per queue = %v, want only team-a's 20", got)
	}

	poll.Eventually(t, t.Context(), wave+30*time.Second, "the first wave ends", func() (bool, string) {
		done := 0
		for _, p := range listPods(t, ns) {
			if strings.HasPrefix(p.Name, "a-first-") && p.Status.Phase == corev1.PodSucceeded {
				done++
			}
		}
		return done == 20, fmt.Sprintf("%d of 20 ended", done)
	})
	poll.Eventually(t, t.Context(), 30*time.Second, "the freed cores are taken again", func() (bool, string) {
		got := running()
		return got["borrow-team-a"]+got["borrow-team-b"] == 20, fmt.Sprint(got)
	})
	// Settled: a later cycle that judged every pending pod changes nothing.
	explained.JudgedSince(t, 30*time.Second, time.Now(), pendingJobs()...)
	if diff := cmp.Diff(map[string]int{"borrow-team-a": 10, "borrow-team-b": 10}, running()); diff != "" {
		t.Errorf("running pods per queue (-want,+got):\n%s", diff)
	}
}
