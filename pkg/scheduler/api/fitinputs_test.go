package api

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSameFitInputs(t *testing.T) {
	pending := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: types.UID("u1")},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
	}
	change := func(f func(p *corev1.Pod)) *corev1.Pod {
		p := pending.DeepCopy()
		f(p)
		return p
	}
	cases := map[string]struct {
		b    *corev1.Pod
		want bool
	}{
		"the same object": {pending, true},
		"bound": {change(func(p *corev1.Pod) {
			p.Spec.NodeName = "n1"
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		}), true},
		"started, its status without resources": {change(func(p *corev1.Pod) {
			p.Spec.NodeName = "n1"
			p.Status.Phase = corev1.PodRunning
			p.Status.PodIP = "10.0.0.1"
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Ready: true}}
		}), true},
		"the same request, spelled otherwise": {change(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1000m")
		}), true},
		"another pod of the same name": {change(func(p *corev1.Pod) { p.UID = "u2" }), false},
		"resized in its spec": {change(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		}), false},
		"a sidecar added": {change(func(p *corev1.Pod) {
			always := corev1.ContainerRestartPolicyAlways
			p.Spec.InitContainers = []corev1.Container{{Name: "s", RestartPolicy: &always}}
		}), false},
		"allocated otherwise by the kubelet": {change(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
		}), false},
		"a resize under way": {change(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue}}
		}), false},
		"pod overhead": {change(func(p *corev1.Pod) {
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
		}), false},
		"pod-level resources": {change(func(p *corev1.Pod) {
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
		}), false},
		"node affinity added while gated": {change(func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
		}), false},
		"a claim allocated": {change(func(p *corev1.Pod) {
			p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu"}}
		}), false},
		"nil": {nil, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SameFitInputs(pending, tc.b); got != tc.want {
				t.Errorf("SameFitInputs = %v, want %v", got, tc.want)
			}
			if tc.b == nil {
				return
			}
			// What FitInputsOf keeps of a pod is judged as the pod is.
			kept := FitInputsOf(tc.b)
			if !AlikeFitInputs(tc.b, kept) || !AlikeFitInputs(kept, tc.b) {
				t.Error("FitInputsOf(b) is not alike b")
			}
			if got, want := AlikeFitInputs(pending, kept), AlikeFitInputs(pending, tc.b); got != want {
				t.Errorf("AlikeFitInputs(pending, FitInputsOf(b)) = %v, want %v as for b", got, want)
			}
		})
	}
}

// TestAlikeFitInputs: another pod alike is one that asks for the same in
// the same namespace, whatever its name, labels and identity.
func TestAlikeFitInputs(t *testing.T) {
	a := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: types.UID("u1"), Labels: map[string]string{"job": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
	}
	other := func(f func(p *corev1.Pod)) *corev1.Pod {
		p := a.DeepCopy()
		p.Name, p.UID, p.Labels = "b", "u2", map[string]string{"job": "b"}
		f(p)
		return p
	}
	cases := map[string]struct {
		b    *corev1.Pod
		want bool
	}{
		"another pod asking for the same": {other(func(*corev1.Pod) {}), true},
		"in another namespace":            {other(func(p *corev1.Pod) { p.Namespace = "other" }), false},
		"asking for more": {other(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		}), false},
		"with pod anti-affinity": {other(func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
		}), false},
		"nil": {nil, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := AlikeFitInputs(a, tc.b); got != tc.want {
				t.Errorf("AlikeFitInputs = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSameWhereLeavesOutWhatItDoesNotCompare: statuses without resources
// and conditions other than a resize's do not count; the rest count in
// order, by what is compared.
func TestSameWhereLeavesOutWhatItDoesNotCompare(t *testing.T) {
	cpu := func(v string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
	}
	started := corev1.ContainerStatus{Name: "a", Ready: true}
	b1 := corev1.ContainerStatus{Name: "b", AllocatedResources: cpu("1")}
	for _, tc := range []struct {
		name string
		x, y []corev1.ContainerStatus
		want bool
	}{
		{"a status without resources left out", []corev1.ContainerStatus{started, b1}, []corev1.ContainerStatus{b1}, true},
		{"the same, spelled otherwise", []corev1.ContainerStatus{b1}, []corev1.ContainerStatus{{Name: "b", AllocatedResources: cpu("1000m")}}, true},
		{"allocated otherwise", []corev1.ContainerStatus{b1}, []corev1.ContainerStatus{{Name: "b", AllocatedResources: cpu("2")}}, false},
		{"one more with resources", []corev1.ContainerStatus{b1}, []corev1.ContainerStatus{b1, {Name: "c", AllocatedResources: cpu("1")}}, false},
		{"another container", []corev1.ContainerStatus{b1}, []corev1.ContainerStatus{{Name: "c", AllocatedResources: cpu("1")}}, false},
	} {
		if got := sameStatusResources(tc.x, tc.y); got != tc.want {
			t.Errorf("statuses, %s: %v, want %v", tc.name, got, tc.want)
		}
	}
	pending := corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible, Message: "no room"}
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}
	reworded := pending
	reworded.Message = "still no room"
	deferred := pending
	deferred.Reason = corev1.PodReasonDeferred
	for _, tc := range []struct {
		name string
		x, y []corev1.PodCondition
		want bool
	}{
		{"other conditions left out", []corev1.PodCondition{ready, pending}, []corev1.PodCondition{pending}, true},
		{"only the message changed", []corev1.PodCondition{pending}, []corev1.PodCondition{reworded}, true},
		{"another reason", []corev1.PodCondition{pending}, []corev1.PodCondition{deferred}, false},
		{"the resize settled", []corev1.PodCondition{ready, pending}, []corev1.PodCondition{ready}, false},
	} {
		if got := sameResizeConditions(tc.x, tc.y); got != tc.want {
			t.Errorf("conditions, %s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAlikePodsShareRequests: a task takes the requests of the pod worked
// out last when its pod is alike, and works out its own otherwise; either
// way they are what its pod asks for.
func TestAlikePodsShareRequests(t *testing.T) {
	pod := func(name, cpu string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		}
	}
	a := NewTaskInfo(pod("a", "1"), "job")
	b := NewTaskInfo(pod("b", "1"), "job")
	c := NewTaskInfo(pod("c", "2"), "job")
	for _, task := range []*TaskInfo{a, b, c} {
		if want := requestsOf(task.Pod); !task.Resreq.Equal(want) {
			t.Errorf("task %s: requests %v, want %v", task.Name, task.Resreq, want)
		}
	}
	if a.Resreq != b.Resreq {
		t.Error("b, alike a, worked its requests out afresh; want a's shared")
	}
	if c.Resreq == b.Resreq {
		t.Error("c, asking for more than b, shares b's requests")
	}
}

// BenchmarkNewTaskInfo measures making the task of a pod as the cache does
// for each pod it is told of, over a backlog of alike pods.
func BenchmarkNewTaskInfo(b *testing.B) {
	pods := make([]*corev1.Pod, 1000)
	for i := range pods {
		pods[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p" + strconv.Itoa(i), UID: types.UID("p" + strconv.Itoa(i))},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		NewTaskInfo(pods[i%len(pods)], "job")
	}
}
