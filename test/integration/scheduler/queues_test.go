//go:build integration

package scheduler

import (
	"fmt"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestQueuesShareByWeightWithinCapability: on 45 cores, queues weighted 3:1
// get 30 and 10 cores, while a third queue capped at 5 cores gets exactly 5,
// never more, though its jobs ask for 20.
func TestQueuesShareByWeightWithinCapability(t *testing.T) {
	const ns = "share"
	createNamespace(t, ns)
	labelledNodes(t, ns, 9, "5")
	createQueue(t, queue("share-a", 3, nil))
	createQueue(t, queue("share-b", 1, nil))
	createQueue(t, queue("share-c", 1, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5")}))
	wants := map[string]int{"share-a": 50, "share-b": 50, "share-c": 20}
	for q, n := range wants {
		for i := range n {
			createPod(t, ns, fmt.Sprintf("%s-%02d", q, i), map[string]string{schedulingv1beta1.QueueNameAnnotation: q}, podSpec(ns, "1"))
		}
	}

	explained := fw.StartSchedulerExplained(t, framework.SchedulerConfig)

	perQueue := func() map[string]int {
		out := map[string]int{}
		for _, p := range listPods(t, ns) {
			if p.Spec.NodeName != "" {
				out[p.Annotations[schedulingv1beta1.QueueNameAnnotation]]++
			}
		}
		return out
	}
	poll.Eventually(t, t.Context(), 60*time.Second, "45 cores in use", func() (bool, string) {
		got := perQueue()
		return got["share-a"]+got["share-b"]+got["share-c"] == 45, fmt.Sprint(got)
	})
	// Settled: a cycle that judged every pending pod afresh changes
	// nothing.
	since := time.Now()
	var pending []string
	for _, p := range listPods(t, ns) {
		if p.Spec.NodeName == "" {
			pending = append(pending, podJob(p))
		}
	}
	if len(pending) != 75 {
		t.Fatalf("%d pods pending, want 75", len(pending))
	}
	explained.JudgedSince(t, 30*time.Second, since, pending...)
	if diff := cmp.Diff(map[string]int{"share-a": 30, "share-b": 10, "share-c": 5}, perQueue()); diff != "" {
		t.Errorf("cores per queue (-want,+got):\n%s", diff)
	}
	var q schedulingv1beta1.Queue
	poll.Eventually(t, t.Context(), 30*time.Second, "queue status shows the allocation", func() (bool, string) {
		if err := fw.Client.Get(t.Context(), keyOf("share-c"), &q); err != nil {
			return false, err.Error()
		}
		cpu := q.Status.Allocated[corev1.ResourceCPU]
		return cpu.Cmp(resource.MustParse("5")) == 0, fmt.Sprintf("allocated %v", q.Status.Allocated)
	})
}

// podJob names the job the scheduler makes of a pod without a PodGroup,
// as its explanations name it.
func podJob(p corev1.Pod) string {
	return p.Namespace + "/" + api.ShadowPodGroupPrefix + string(p.UID)
}
