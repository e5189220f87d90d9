//go:build integration

package scheduler

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

const loadAwareConf = "../../../examples/scheduler/load-aware.conf"

// nodeUsage is the NodeUsage an agent publishes for a node using cpu,
// measured at the time given over five minutes.
func nodeUsage(node, cpu string, at time.Time) *metricsv1alpha1.NodeUsage {
	return &metricsv1alpha1.NodeUsage{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Timestamp:  metav1.NewTime(at),
		Window:     metav1.Duration{Duration: 5 * time.Minute},
		Usage:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi")},
	}
}

// TestLoadAwareExample runs examples/scheduler/load-aware.conf on three
// 16-CPU nodes whose requests are all free but whose measured CPU use is
// 14 (hot, above the 80% threshold), 9 (warm) and 4 (cool):
//   - a pod that may only go to the hot node waits, and its PodGroup
//     says the node's CPU usage is above the threshold;
//   - four 2-CPU pods avoid the hot node and go where the usage is
//     lowest once each is added: three to cool, one to warm;
//   - once the hot node's usage is stale, the waiting pod is placed there:
//     the node is judged by its requests.
func TestLoadAwareExample(t *testing.T) {
	const ns = "load-aware"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	hot, warm, cool := ns+"-hot", ns+"-warm", ns+"-cool"
	var specs []controlplane.NodeSpec
	for _, name := range []string{hot, warm, cool} {
		s := cpuNode(name, "16")
		s.Labels = map[string]string{"test": ns, "node": name}
		specs = append(specs, s)
	}
	createNodes(t, specs)
	now := time.Now()
	for _, u := range []*metricsv1alpha1.NodeUsage{nodeUsage(hot, "14", now), nodeUsage(warm, "9", now), nodeUsage(cool, "4", now)} {
		if err := fw.Client.Create(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fw.Client.Delete(t.Context(), u) })
	}
	runSchedulerFile(t, loadAwareConf)

	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pinned"},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "default"},
	}
	if err := fw.Client.Create(t.Context(), pg); err != nil {
		t.Fatal(err)
	}
	pinned := podSpec(ns, "2")
	pinned.NodeSelector["node"] = hot
	createPod(t, ns, "pinned", map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: "pinned"}, pinned)
	waitUnschedulable(t, pg, "the pod pinned to the hot node waits", "node cpu usage above 80%")

	for i := range 4 {
		createPod(t, ns, fmt.Sprintf("worker-%d", i), nil, podSpec(ns, "2"))
	}
	poll.Eventually(t, t.Context(), 60*time.Second, "four workers bound", func() (bool, string) {
		n := 0
		pods := listPods(t, ns)
		for _, p := range pods {
			if p.Name != "pinned" && p.Spec.NodeName != "" {
				n++
			}
		}
		return n == 4, describePods(pods)
	})
	placed := map[string]int{}
	for _, p := range listPods(t, ns) {
		if p.Name != "pinned" {
			placed[p.Spec.NodeName]++
		}
	}
	if want := map[string]int{cool: 3, warm: 1}; fmt.Sprint(placed) != fmt.Sprint(want) {
		t.Errorf("workers placed %v, want %v: by usage once added, cool 6, 8, 10 CPUs against warm's 11, then warm", placed, want)
	}

	// The hot node's agent stops reporting: its usage grows old and the
	// node is judged by its requests, all free.
	var u metricsv1alpha1.NodeUsage
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: hot}, &u); err != nil {
		t.Fatal(err)
	}
	u.Timestamp = metav1.NewTime(now.Add(-10 * time.Minute))
	if err := fw.Client.Update(t.Context(), &u); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 60*time.Second, "the pinned pod placed once the hot node's usage is stale", podBound(t, ns, "pinned", hot))
}

// podBound is a poll condition: the pod ns/name is bound to node.
func podBound(t *testing.T, ns, name, node string) func() (bool, string) {
	return func() (bool, string) {
		p, err := getPod(t, ns, name)
		if err != nil {
			return false, err.Error()
		}
		return p.Spec.NodeName == node, fmt.Sprintf("on %q", p.Spec.NodeName)
	}
}
