//go:build integration

package scheduler

import (
	"context"
	"fmt"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

func cpuNode(name, cpu string) controlplane.NodeSpec {
	return controlplane.NodeSpec{Name: name, Capacity: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Gi"),
	}}
}

// createNamespace creates a test's namespace; its pods are deleted when the
// test ends (namespaces themselves need kube-controller-manager to go), so
// that what one test leaves running does not take part in the next test's
// queue shares.
func createNamespace(t *testing.T, name string) {
	t.Helper()
	if err := fw.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := fw.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(name), client.GracePeriodSeconds(0)); err != nil {
			t.Errorf("deleting the pods of %s: %v", name, err)
		}
		if err := fw.Client.DeleteAllOf(ctx, &schedulingv1beta1.PodGroup{}, client.InNamespace(name)); err != nil {
			t.Errorf("deleting the PodGroups of %s: %v", name, err)
		}
	})
}

// createQueue creates a queue, deleted when the test ends unless it is one
// of the queues every cluster has.
func createQueue(t *testing.T, q *schedulingv1beta1.Queue) {
	t.Helper()
	if err := fw.Client.Create(t.Context(), q); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	if q.Name == schedulingv1beta1.DefaultQueue || q.Name == schedulingv1beta1.RootQueue {
		return
	}
	t.Cleanup(func() {
		if err := fw.Client.Delete(context.Background(), q.DeepCopy()); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting queue %s: %v", q.Name, err)
		}
	})
}

// createGangOn creates a PodGroup of pods 1-cpu pods on the nodes labelled
// test=ns, in the default queue.
func createGangOn(ctx context.Context, ns, name string, pods int) error {
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: int32(pods), Queue: "default"},
	}
	if err := fw.Client.Create(ctx, pg); err != nil {
		return err
	}
	for i := range pods {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", name, i),
				Annotations: map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: name}},
			Spec: podSpec(ns, "1"),
		}
		if err := fw.Client.Create(ctx, pod); err != nil {
			return err
		}
	}
	return nil
}

func keyOf(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

func boundPods(t *testing.T, ns string) (bound, total int) {
	t.Helper()
	var pods corev1.PodList
	if err := fw.Client.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			bound++
		}
	}
	return bound, len(pods.Items)
}

func TestGangWaitsWholeForRoom(t *testing.T) {
	createNamespace(t, "gang")
	createQueue(t, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	labelledNodes(t, "gang", 3, "3")
	explained := fw.StartSchedulerExplained(t, framework.SchedulerConfig)
	if err := createGangOn(t.Context(), "gang", "train", 10); err != nil {
		t.Fatal(err)
	}

	var pg schedulingv1beta1.PodGroup
	key := client.ObjectKey{Namespace: "gang", Name: "train"}
	poll.Eventually(t, t.Context(), 30*time.Second, "Unschedulable condition with the gang shortfall", func() (bool, string) {
		if err := fw.Client.Get(t.Context(), key, &pg); err != nil {
			return false, err.Error()
		}
		for _, c := range pg.Status.Conditions {
			if c.Type == schedulingv1beta1.PodGroupUnschedulableType && c.Status == corev1.ConditionTrue {
				return strings.Contains(c.Message, "9 of 10 tasks placeable"), c.Message
			}
		}
		return false, fmt.Sprintf("phase %q, conditions %+v", pg.Status.Phase, pg.Status.Conditions)
	})
	if pg.Status.Phase != schedulingv1beta1.PodGroupInqueue {
		t.Errorf("phase = %q, want Inqueue", pg.Status.Phase)
	}
	// The gang stays whole: nothing is bound now, nor after two more
	// cycles that judged it afresh.
	since := time.Now()
	for range 2 {
		x := explained.JudgedSince(t, 30*time.Second, since, "gang/train")["gang/train"]
		if bound, total := boundPods(t, "gang"); bound != 0 || total != 10 {
			t.Fatalf("%d of %d pods bound while the gang cannot fit; the scheduler says %+v", bound, total, x.Blockers)
		}
		since = x.Cycle.Add(time.Nanosecond)
	}

	extra := cpuNode("gang-3", "3")
	extra.Labels = map[string]string{"test": "gang"}
	if err := controlplane.CreateNodes(t.Context(), fw.Client, []controlplane.NodeSpec{extra}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "all 10 pods bound after a node is added", func() (bool, string) {
		bound, total := boundPods(t, "gang")
		return bound == 10, fmt.Sprintf("%d of %d bound", bound, total)
	})
	poll.Eventually(t, t.Context(), 30*time.Second, "PodGroup Running and Scheduled", func() (bool, string) {
		if err := fw.Client.Get(t.Context(), key, &pg); err != nil {
			return false, err.Error()
		}
		return pg.Status.Phase == schedulingv1beta1.PodGroupRunning && pg.Status.Running == 10,
			fmt.Sprintf("phase %q running %d", pg.Status.Phase, pg.Status.Running)
	})
}
