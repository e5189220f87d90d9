//go:build integration

package podgroup

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

// gangNode is the i-th 4-cpu node of a test, labelled test=<label>.
func gangNode(label string, i int) controlplane.NodeSpec {
	return controlplane.NodeSpec{
		Name:   fmt.Sprintf("%s-%d", label, i),
		Labels: map[string]string{"test": label},
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"),
		},
	}
}

// placement counts the Deployment's pods, those bound and those running.
func placement(t *testing.T, ns string) (total, bound, running int) {
	t.Helper()
	var list corev1.PodList
	if err := fw.Client.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{"app": "train"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			bound++
		}
		if p.Status.Phase == corev1.PodRunning {
			running++
		}
	}
	return len(list.Items), bound, running
}

// TestDeploymentIsScheduledAllOrNothing: a Deployment with the gang
// annotation, whose three pods fit only together, waits whole until there
// is room for all three, then runs whole.
//
// The scheduler starts once the controller has grouped the pods. Started
// before, it may place some of them first: it schedules a pod that names no
// PodGroup as a group of one at once, and the Deployment's pods name none
// until the controller has annotated them (see docs/podgroups.md, "Known
// limitation"). TestDeploymentCreatedWhileTheSchedulerRuns covers that case.
func TestDeploymentIsScheduledAllOrNothing(t *testing.T) {
	testDeploymentAllOrNothing(t, "gang", false)
}

// TestDeploymentCreatedWhileTheSchedulerRuns is the same with the scheduler
// running before the Deployment exists, as in a real cluster.
func TestDeploymentCreatedWhileTheSchedulerRuns(t *testing.T) {
	testDeploymentAllOrNothing(t, "gang-live", true)
}

func testDeploymentAllOrNothing(t *testing.T, ns string, schedulerFirst bool) {
	createNamespace(t, ns)
	for _, name := range []string{schedulingv1beta1.RootQueue, schedulingv1beta1.DefaultQueue} {
		q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := fw.Client.Create(t.Context(), q); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	// 8 cpus for three pods of 4 cpus: two fit, the gang does not.
	if err := controlplane.CreateNodes(t.Context(), fw.Client, []controlplane.NodeSpec{gangNode(ns, 0), gangNode(ns, 1)}); err != nil {
		t.Fatal(err)
	}
	startKubeControllerManager(t)
	startController(t)
	var explained *framework.Explanations
	if schedulerFirst {
		explained = startScheduler(t)
	}

	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "train", Annotations: gang(3)},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "train"}},
				Spec:       podSpec(ns, "4"),
			},
		},
	}
	create(t, d)
	pg := oneGroup(t, ns, "train", 3)
	if pg.Spec.MinMember != 3 {
		t.Fatalf("minMember = %d, want 3", pg.Spec.MinMember)
	}
	if !schedulerFirst {
		explained = startScheduler(t)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the gang reported unschedulable", func() (bool, string) {
		if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(pg), pg); err != nil {
			return false, err.Error()
		}
		for _, c := range pg.Status.Conditions {
			if c.Type == schedulingv1beta1.PodGroupUnschedulableType && c.Status == corev1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("phase %q, conditions %+v", pg.Status.Phase, pg.Status.Conditions)
	})
	// Nothing is placed now, nor after two more cycles that judged the
	// gang afresh.
	since := time.Now()
	job := ns + "/" + pg.Name
	for range 2 {
		x := explained.JudgedSince(t, 30*time.Second, since, job)[job]
		if total, bound, _ := placement(t, ns); bound != 0 {
			t.Fatalf("%d of %d pods bound while the gang cannot fit; the scheduler says %+v", bound, total, x.Blockers)
		}
		since = x.Cycle.Add(time.Nanosecond)
	}

	if err := controlplane.CreateNodes(t.Context(), fw.Client, []controlplane.NodeSpec{gangNode(ns, 2)}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 60*time.Second, "all three pods running once a node is added", func() (bool, string) {
		total, bound, running := placement(t, ns)
		return total == 3 && running == 3, fmt.Sprintf("%d pods, %d bound, %d running", total, bound, running)
	})
}
