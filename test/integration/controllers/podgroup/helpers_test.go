//go:build integration

package podgroup

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

func createNamespace(t *testing.T, name string) {
	t.Helper()
	if err := fw.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := fw.Client.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// podSpec is a one-container pod spec for the volcano scheduler that
// requests cpu and runs only on the nodes labelled test=<label>.
func podSpec(label, cpu string) corev1.PodSpec {
	return corev1.PodSpec{
		SchedulerName: "volcano",
		NodeSelector:  map[string]string{"test": label},
		Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		}}},
	}
}

func podGroups(t *testing.T, ns string) []schedulingv1beta1.PodGroup {
	t.Helper()
	var list schedulingv1beta1.PodGroupList
	if err := fw.Client.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func pods(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := fw.Client.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func names(pgs []schedulingv1beta1.PodGroup) []string {
	var out []string
	for _, pg := range pgs {
		out = append(out, pg.Name)
	}
	return out
}

// cmpSorted compares string slices as sets.
var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })
