package topology

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	tt "github.com/caldera-sh/caldera/apis/topology/v1alpha1/testing"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// nodes returns n nodes named <prefix>-<i>, each labelled rack=<prefix>.
func nodes(prefix string, n int) []*corev1.Node {
	var out []*corev1.Node
	for i := range n {
		out = append(out, st.MakeNode(fmt.Sprintf("%s-%d", prefix, i)).Label("rack", prefix).Obj())
	}
	return out
}

func TestBuild(t *testing.T) {
	all := append(append(nodes("r1", 2), nodes("r2", 2)...), nodes("r3", 2)...)
	hns := []*topologyv1alpha1.HyperNode{
		tt.MakeHyperNode("spine", 2).TierName("spine").ExactHyperNode("leaf-a").ExactHyperNode("leaf-b").Obj(),
		tt.MakeHyperNode("leaf-a", 1).TierName("leaf").ExactNode("r1-0").ExactNode("r1-1").Obj(),
		tt.MakeHyperNode("leaf-b", 1).TierName("leaf").RegexNodes("^r2-").Obj(),
		tt.MakeHyperNode("leaf-c", 1).TierName("leaf").LabelNodes(&metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r3"}}).Obj(),
	}
	tree := Build(hns, all)
	got := map[string][]string{}
	for _, h := range tree.List {
		got[h.Name] = h.Nodes
	}
	want := map[string][]string{
		"leaf-a": {"r1-0", "r1-1"},
		"leaf-b": {"r2-0", "r2-1"},
		"leaf-c": {"r3-0", "r3-1"},
		"spine":  {"r1-0", "r1-1", "r2-0", "r2-1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nodes per HyperNode (-want,+got):\n%s", diff)
	}
	if p := tree.ByName["leaf-a"].Parent; p == nil || p.Name != "spine" {
		t.Errorf("leaf-a's parent = %v, want spine", p)
	}
	if tree.ByName["leaf-c"].Parent != nil {
		t.Errorf("leaf-c has a parent, want it at the top of its own tree")
	}
	var ancestors []string
	for _, h := range tree.Ancestors("r2-1") {
		ancestors = append(ancestors, h.Name)
	}
	if diff := cmp.Diff([]string{"leaf-b", "spine"}, ancestors); diff != "" {
		t.Errorf("ancestors of r2-1 (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int32{"leaf": 1, "spine": 2}, tree.TierNames); diff != "" {
		t.Errorf("tier names (-want,+got):\n%s", diff)
	}
	if len(tree.Problems) != 0 {
		t.Errorf("problems %v, want none", tree.Problems)
	}
}

func TestBuildResolvesProblems(t *testing.T) {
	all := nodes("r1", 2)
	hns := []*topologyv1alpha1.HyperNode{
		// Both claim leaf; a-spine, first by name, keeps it.
		tt.MakeHyperNode("a-spine", 2).ExactHyperNode("leaf").Obj(),
		tt.MakeHyperNode("b-spine", 2).ExactHyperNode("leaf").Obj(),
		tt.MakeHyperNode("leaf", 1).ExactNode("r1-0").ExactNode("r1-1").Obj(),
		// A member of the same tier would allow cycles: ignored.
		tt.MakeHyperNode("peer", 1).ExactHyperNode("leaf").Obj(),
		// r1-1 is already leaf's.
		tt.MakeHyperNode("other", 1).ExactNode("r1-1").ExactNode("gone").Obj(),
		tt.MakeHyperNode("missing", 3).ExactHyperNode("nothing").Obj(),
	}
	tree := Build(hns, all)
	var reasons []string
	for _, p := range tree.Problems {
		reasons = append(reasons, p.HyperNode+": "+p.Reason)
	}
	want := []string{
		"leaf: " + ReasonMultipleParents,
		"missing: " + ReasonMemberNotFound,
		"other: " + ReasonMemberNotFound,
		"other: " + ReasonNodeInSeveralHyperNode,
		"peer: " + ReasonTierNotAbove,
	}
	if diff := cmp.Diff(want, reasons); diff != "" {
		t.Errorf("problems (-want,+got):\n%s", diff)
	}
	if p := tree.ByName["leaf"].Parent; p == nil || p.Name != "a-spine" {
		t.Errorf("leaf's parent = %v, want a-spine", p)
	}
	if diff := cmp.Diff([]string{"r1-0", "r1-1"}, tree.ByName["a-spine"].Nodes); diff != "" {
		t.Errorf("a-spine's nodes (-want,+got):\n%s", diff)
	}
	if n := tree.ByName["b-spine"].Nodes; len(n) != 0 {
		t.Errorf("b-spine holds %v, want nothing", n)
	}
	if h := tree.LeafOf["r1-1"]; h.Name != "leaf" {
		t.Errorf("r1-1 is in %s, want leaf", h.Name)
	}
}
