package api

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

func TestSubGroupsOf(t *testing.T) {
	job := NewJobInfo("ns/j")
	size := int32(2)
	job.SetPodGroup(&schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"},
		Spec: schedulingv1beta1.PodGroupSpec{SubGroupPolicy: []schedulingv1beta1.SubGroupPolicySpec{
			{
				Name:           "worker",
				LabelSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}},
				MatchLabelKeys: []string{"part"},
				SubGroupSize:   &size,
			},
			// Takes what the first did not: the launcher and the worker
			// without a partition.
			{Name: "rest"},
		}},
	})
	add := func(name string, labels map[string]string) {
		job.AddTask(NewTaskInfo(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: name, UID: types.UID(name), Labels: labels,
		}}, job.UID))
	}
	for i := range 24 {
		add(fmt.Sprintf("w-%02d", i), map[string]string{"role": "worker", "part": fmt.Sprint(i / 2)})
	}
	add("w-x", map[string]string{"role": "worker"})
	add("launcher", map[string]string{"role": "launcher"})

	policies, err := SubGroupsOf(job)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	var order []string
	for _, p := range policies {
		for _, g := range p.Groups {
			order = append(order, g.Name)
			for _, tk := range g.Tasks {
				got[g.Name] = append(got[g.Name], tk.Name)
			}
			if g.Size != int32(len(g.Tasks)) {
				t.Errorf("%s: size %d with %d tasks", g.Name, g.Size, len(g.Tasks))
			}
		}
	}
	var wantOrder []string
	for i := range 12 {
		wantOrder = append(wantOrder, fmt.Sprintf("worker/%d", i))
	}
	wantOrder = append(wantOrder, "rest")
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("sub-groups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"w-08", "w-09"}, got["worker/4"]); diff != "" {
		t.Errorf("worker/4 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"launcher", "w-x"}, got["rest"]); diff != "" {
		t.Errorf("rest (-want +got):\n%s", diff)
	}

	job.PodGroup.Spec.SubGroupPolicy[0].LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "role", Operator: "Near"}}
	if _, err := SubGroupsOf(job); err == nil {
		t.Error("an invalid label selector gave no error")
	}
}
