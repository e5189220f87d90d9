package cache

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func same(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestSharerSharesEqualParts(t *testing.T) {
	s := NewSharer()
	pod := func(name, cpu string, seconds int64) *corev1.Pod {
		p := st.MakePod("ns", name).Req("cpu", cpu, "memory", "1Gi").Obj()
		p.Spec.Tolerations = []corev1.Toleration{
			{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(seconds)},
		}
		return p
	}
	a, b, c, d := pod("a", "1", 300), pod("b", "1", 300), pod("c", "2", 300), pod("d", "1", 30)
	for _, p := range []*corev1.Pod{a, b, c, d} {
		s.SharePod(p)
	}
	req := func(p *corev1.Pod) corev1.ResourceList { return p.Spec.Containers[0].Resources.Requests }
	if !same(req(a), req(b)) {
		t.Errorf("equal requests are not shared")
	}
	if same(req(a), req(c)) {
		t.Errorf("different requests are shared")
	}
	if !same(a.Spec.Tolerations, b.Spec.Tolerations) {
		t.Errorf("equal tolerations are not shared")
	}
	if same(a.Spec.Tolerations, d.Spec.Tolerations) {
		t.Errorf("tolerations with different seconds are shared")
	}
	if q := req(c)[corev1.ResourceCPU]; q.String() != "2" {
		t.Errorf("c's cpu request = %s, want 2", q.String())
	}

	n1, n2 := st.MakeNode("n1").Alloc("cpu", "32", "memory", "128Gi").Obj(), st.MakeNode("n2").Alloc("cpu", "32", "memory", "128Gi").Obj()
	s.ShareNode(n1)
	s.ShareNode(n2)
	if !same(n1.Status.Allocatable, n2.Status.Allocatable) || !same(n1.Status.Capacity, n2.Status.Capacity) {
		t.Errorf("nodes of one shape do not share their resources")
	}
}

func TestSharerTablesAreBounded(t *testing.T) {
	s := NewSharer()
	for i := range maxShared + 10 {
		s.SharePod(st.MakePod("ns", "p").Req("cpu", fmt.Sprintf("%dm", i+1)).Obj())
	}
	if n := len(s.lists); n != maxShared {
		t.Errorf("table holds %d lists, want %d", n, maxShared)
	}
	// A list past the bound is kept as it came.
	p := st.MakePod("ns", "p").Req("cpu", "99999m").Obj()
	before := p.Spec.Containers[0].Resources.Requests
	s.SharePod(p)
	if !same(before, p.Spec.Containers[0].Resources.Requests) {
		t.Errorf("a list past the bound was replaced")
	}
}

func TestEmptiedDropsTablesGrownLarge(t *testing.T) {
	small := sets.New("a", "b")
	if got := emptied(small); got.Len() != 0 || reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(small).UnsafePointer() {
		t.Fatalf("a small set is emptied in place: got %v", got)
	}
	large := sets.New[string]()
	for i := range 5000 {
		large.Insert(fmt.Sprint(i))
	}
	if got := emptied(large); got.Len() != 0 || reflect.ValueOf(got).UnsafePointer() == reflect.ValueOf(large).UnsafePointer() {
		t.Fatalf("a set grown large is replaced by a new empty one: got %d members", got.Len())
	}
}
