//go:build integration

package queue

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

const (
	open    = schedulingv1beta1.QueueStateOpen
	closing = schedulingv1beta1.QueueStateClosing
	closed  = schedulingv1beta1.QueueStateClosed
)

func TestRootAndDefaultAreKept(t *testing.T) {
	startController(t)
	waitState(t, schedulingv1beta1.RootQueue, open, "")
	waitState(t, schedulingv1beta1.DefaultQueue, open, "")
	if p := getQueue(t, schedulingv1beta1.RootQueue).Spec.Parent; p != "" {
		t.Errorf("root has parent %q", p)
	}
	def := getQueue(t, schedulingv1beta1.DefaultQueue)
	if def.Spec.Weight != 1 || def.Spec.Reclaimable == nil || !*def.Spec.Reclaimable || def.Spec.Parent != schedulingv1beta1.RootQueue {
		t.Errorf("default queue spec %+v, want weight 1, reclaimable, parent root", def.Spec)
	}

	// Deleted (no webhook stops it here), it comes back.
	if err := fw.Client.Delete(t.Context(), def); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "default recreated", func() (bool, string) {
		q := &schedulingv1beta1.Queue{}
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: schedulingv1beta1.DefaultQueue}, q); err != nil {
			return false, err.Error()
		}
		return q.UID != def.UID && q.Status.State == open, string(q.Status.State)
	})
}

// TestCloseQueueWaitsForRunningWork: a closed queue is Closing while a job
// it admitted runs, Closed once the job is done, and opens again; the
// scheduler's part of the status is kept throughout.
func TestCloseQueueWaitsForRunningWork(t *testing.T) {
	createNamespace(t, "close")
	createQueue(t, "team", "")
	node := controlplane.NodeSpec{Name: "close-0", Labels: map[string]string{"test": "close"}, Capacity: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
	}}
	if err := controlplane.CreateNodes(t.Context(), fw.Client, []controlplane.NodeSpec{node}); err != nil {
		t.Fatal(err)
	}
	startController(t)
	startScheduler(t)
	waitState(t, "team", open, "")

	create(t, &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "close", Name: "job"},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "team"},
	})
	create(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "close", Name: "job-0", Annotations: map[string]string{
			schedulingv1beta1.KubeGroupNameAnnotation: "job",
			"pod.caldera.sh/run-duration":             "10s",
		}},
		Spec: corev1.PodSpec{
			SchedulerName: "volcano",
			NodeSelector:  map[string]string{"test": "close"},
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}}},
		},
	})
	poll.Eventually(t, t.Context(), 30*time.Second, "the job running", func() (bool, string) {
		q := getQueue(t, "team")
		return q.Status.Running == 1, fmt.Sprintf("%+v", q.Status)
	})

	command(t, busv1alpha1.CloseQueueAction, "team")
	q := getQueue(t, "team")
	if q.Status.State != closing {
		t.Errorf("state right after CloseQueue = %s, want Closing while the job runs", q.Status.State)
	}
	waitState(t, "team", closed, "")
	// The scheduler goes on writing its counts; neither side undoes the
	// other's fields.
	poll.Eventually(t, t.Context(), 30*time.Second, "the scheduler's counts of the closed queue", func() (bool, string) {
		q := getQueue(t, "team")
		return q.Status.Running == 0 && q.Status.State == closed, fmt.Sprintf("%+v", q.Status)
	})

	command(t, busv1alpha1.OpenQueueAction, "team")
	waitState(t, "team", open, "")
}

// TestScheduledCountsKeepAQueueClosing: the scheduler counts a gang it
// placed as running in its queue's status before the gang's PodGroup shows
// Running (its write waits for the pods to start). The controller counts
// it too: the queue is Closing until the scheduler's count falls to zero.
func TestScheduledCountsKeepAQueueClosing(t *testing.T) {
	createNamespace(t, "counted")
	createQueue(t, "counted", "")
	startController(t)
	waitState(t, "counted", open, "")
	create(t, &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "counted", Name: "placed"},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "counted"},
	})
	setRunning := func(n int32) {
		t.Helper()
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"status":{"running":%d}}`, n))
		if err := fw.Client.Status().Patch(t.Context(), &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "counted"}}, patch); err != nil {
			t.Fatal(err)
		}
	}
	setRunning(1)

	command(t, busv1alpha1.CloseQueueAction, "counted")
	if q := getQueue(t, "counted"); q.Status.State != closing {
		t.Errorf("state right after CloseQueue = %s, want Closing while the scheduler counts a running gang", q.Status.State)
	}
	setRunning(0)
	waitState(t, "counted", closed, "")
}

func TestClosingAParentClosesItsChildren(t *testing.T) {
	startController(t)
	createQueue(t, "eng", "")
	createQueue(t, "ml", "eng")
	createQueue(t, "web", "eng")
	for _, q := range []string{"eng", "ml", "web"} {
		waitState(t, q, open, "")
	}
	command(t, busv1alpha1.CloseQueueAction, "web")
	waitState(t, "web", closed, "")

	command(t, busv1alpha1.CloseQueueAction, "eng")
	waitState(t, "eng", closed, "")
	waitState(t, "ml", closed, "true")
	waitState(t, "web", closed, "")

	command(t, busv1alpha1.OpenQueueAction, "eng")
	waitState(t, "eng", open, "")
	waitState(t, "ml", open, "false")
	// The queue closed by hand stays closed. A Command with no action asks
	// for a sync only: once it is executed, web was decided on with its
	// parent open (the controller saw eng open: it reopened ml).
	command(t, "", "web")
	if q := getQueue(t, "web"); q.Status.State != closed || q.Annotations[schedulingv1beta1.ClosedByParentAnnotation] != "" {
		t.Errorf("web after its parent reopened: %s, mark %q; want Closed, no mark", q.Status.State, q.Annotations[schedulingv1beta1.ClosedByParentAnnotation])
	}
}
