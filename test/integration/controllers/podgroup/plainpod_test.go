//go:build integration

package podgroup

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controllers/podgroup"
	"github.com/caldera-sh/caldera/test/poll"
)

// groupedPod waits until a pod names a PodGroup that exists, and returns
// both.
func groupedPod(t *testing.T, ns, name string) (*corev1.Pod, *schedulingv1beta1.PodGroup) {
	t.Helper()
	pod := &corev1.Pod{}
	pg := &schedulingv1beta1.PodGroup{}
	poll.Eventually(t, t.Context(), 30*time.Second, "pod "+name+" in a PodGroup", func() (bool, string) {
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			return false, err.Error()
		}
		group := pod.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]
		if group == "" {
			return false, "pod not annotated"
		}
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: group}, pg); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return pod, pg
}

func TestPlainPodGetsOneGroupAcrossRestarts(t *testing.T) {
	createNamespace(t, "plain")
	// The pod exists before the controller starts, as after an outage.
	solo := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "plain", Name: "solo",
			Annotations: map[string]string{schedulingv1beta1.QueueNameAnnotation: "research"}},
		Spec: podSpec("plain", "2"),
	}
	create(t, solo)
	stop := startController(t)

	_, pg := groupedPod(t, "plain", "solo")
	if want := "podgroup-" + string(solo.UID); pg.Name != want {
		t.Errorf("PodGroup name = %q, want %q", pg.Name, want)
	}
	wantSpec := schedulingv1beta1.PodGroupSpec{
		MinMember:    1,
		Queue:        "research",
		MinResources: &corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
	}
	if diff := cmp.Diff(wantSpec, pg.Spec); diff != "" {
		t.Errorf("PodGroup spec (-want,+got):\n%s", diff)
	}
	wantOwner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "solo", UID: solo.UID, Controller: new(true)}}
	if diff := cmp.Diff(wantOwner, pg.OwnerReferences); diff != "" {
		t.Errorf("owner references (-want,+got):\n%s", diff)
	}
	first := pg.UID

	// A crash after creating a group but before annotating its pod: the
	// group is there, the pod does not name it yet.
	late := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "plain", Name: "late"}, Spec: podSpec("plain", "1")}
	stop()
	create(t, late)
	made := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "plain", Name: "podgroup-" + string(late.UID),
			Labels: map[string]string{podgroup.ManagedByLabel: podgroup.ManagedByValue}},
		Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "default"},
	}
	create(t, made)

	startController(t)
	_, latePG := groupedPod(t, "plain", "late")
	if latePG.UID != made.UID {
		t.Errorf("the group made before the crash was replaced")
	}
	// A pod created after the restart shows the new controller at work.
	after := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "plain", Name: "after"}, Spec: podSpec("plain", "1")}
	create(t, after)
	groupedPod(t, "plain", "after")

	got := names(podGroups(t, "plain"))
	want := []string{"podgroup-" + string(after.UID), "podgroup-" + string(late.UID), "podgroup-" + string(solo.UID)}
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Errorf("PodGroups after the restart (-want,+got):\n%s", diff)
	}
	var again schedulingv1beta1.PodGroup
	if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(pg), &again); err != nil {
		t.Fatal(err)
	}
	if again.UID != first {
		t.Errorf("the first pod's group was recreated")
	}
}

func TestPodsThatNameAPodGroupAreLeftAlone(t *testing.T) {
	createNamespace(t, "own")
	// An operator (Spark, Kubeflow, KubeRay, a Volcano Job) made its group.
	theirs := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "own", Name: "spark-pi-pg"},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 2, Queue: "default"},
	}
	create(t, theirs)
	for _, name := range []string{"driver", "exec-1"} {
		create(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "own", Name: name,
				Annotations: map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: "spark-pi-pg"}},
			Spec: podSpec("own", "1"),
		})
	}
	foreign := podSpec("own", "1")
	foreign.SchedulerName = "default-scheduler"
	create(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "own", Name: "not-ours"}, Spec: foreign})
	control := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "own", Name: "control"}, Spec: podSpec("own", "1")}
	create(t, control)

	startController(t)
	groupedPod(t, "own", "control")
	// The other pods were seen in the same initial sync, before any
	// reconcile started: once the controller's queue is drained and no
	// reconcile runs, any wrong write has landed.
	poll.Eventually(t, t.Context(), 30*time.Second, "the PodGroup controller idle", func() (bool, string) {
		return controllerIdle(t, podgroup.ControllerName)
	})

	got := names(podGroups(t, "own"))
	if diff := cmp.Diff([]string{"podgroup-" + string(control.UID), "spark-pi-pg"}, got, cmpSorted); diff != "" {
		t.Errorf("PodGroups (-want,+got):\n%s", diff)
	}
	var now schedulingv1beta1.PodGroup
	if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(theirs), &now); err != nil {
		t.Fatal(err)
	}
	if now.ResourceVersion != theirs.ResourceVersion {
		t.Errorf("the operator's PodGroup was written: %+v", now)
	}
	for _, p := range pods(t, "own") {
		want := map[string]string{"driver": "spark-pi-pg", "exec-1": "spark-pi-pg", "not-ours": "", "control": "podgroup-" + string(control.UID)}[p.Name]
		if got := p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]; got != want {
			t.Errorf("pod %s names PodGroup %q, want %q", p.Name, got, want)
		}
	}
}

// controllerIdle reports whether the controller, running in this process,
// has nothing queued and no reconcile running, by controller-runtime's
// metrics: its workqueue depth (at every priority) and active workers.
func controllerIdle(t *testing.T, name string) (bool, string) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return false, err.Error()
	}
	var queued, working float64
	seen := 0
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case f.GetName() == "workqueue_depth" && labels["name"] == name:
				queued += m.GetGauge().GetValue()
				seen++
			case f.GetName() == "controller_runtime_active_workers" && labels["controller"] == name:
				working += m.GetGauge().GetValue()
				seen++
			}
		}
	}
	return seen >= 2 && queued == 0 && working == 0, fmt.Sprintf("%v queued, %v reconciling (%d series)", queued, working, seen)
}
