package hypernode_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	testingtopo "github.com/caldera-sh/caldera/apis/topology/v1alpha1/testing"
	"github.com/caldera-sh/caldera/pkg/webhooks/hypernode"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		hn   *topologyv1alpha1.HyperNode
		want []metav1.StatusCause
	}{
		"leaf of nodes": {
			hn: testingtopo.MakeHyperNode("rack-1", 1).ExactNode("node-1").RegexNodes("^rack1-.*$").Obj(),
		},
		"pattern that does not compile": {
			hn: testingtopo.MakeHyperNode("rack-1", 1).RegexNodes("rack(").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.members[0].selector.regexMatch.pattern",
				"Invalid value: \"rack(\": error parsing regexp: missing closing ): `rack(`")},
		},
		"itself as a member": {
			hn: testingtopo.MakeHyperNode("spine", 2).ExactHyperNode("spine").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.members[0].selector.exactMatch.name",
				`Invalid value: "spine": a HyperNode cannot be a member of itself`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := hypernode.NewWebhook(wt.Reader(t))
			_, err := w.ValidateCreate(t.Context(), tc.hn)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate causes (-want,+got):\n%s", diff)
			}
			_, err = w.ValidateUpdate(t.Context(), testingtopo.MakeHyperNode(tc.hn.Name, 1).Obj(), tc.hn)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateUpdate causes (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestCycles: a HyperNode member below which the HyperNode under admission
// already sits is refused, naming the member and the cycle; on update only
// the members the update adds are checked.
func TestCycles(t *testing.T) {
	existing := []client.Object{
		testingtopo.MakeHyperNode("a", 1).ExactHyperNode("b").Obj(),
		testingtopo.MakeHyperNode("b", 1).ExactHyperNode("c").ExactNode("node-1").Obj(),
		testingtopo.MakeHyperNode("c", 1).ExactNode("node-2").Obj(),
		testingtopo.MakeHyperNode("loop-x", 1).ExactHyperNode("loop-y").Obj(),
		testingtopo.MakeHyperNode("loop-y", 1).ExactHyperNode("loop-x").Obj(),
		testingtopo.MakeHyperNode("top", 2).ExactHyperNode("later").Obj(),
	}
	memberName := func(i string) string { return "spec.members[" + i + "].selector.exactMatch.name" }
	cases := map[string]struct {
		old, hn *topologyv1alpha1.HyperNode
		want    []metav1.StatusCause
	}{
		"a new HyperNode listing the HyperNode that lists it": {
			hn: testingtopo.MakeHyperNode("later", 1).ExactNode("node-3").ExactHyperNode("top").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, memberName("1"),
				`Invalid value: "top": the HyperNodes would form a cycle: later -> top -> later`)},
		},
		"two HyperNodes listing each other": {
			old: testingtopo.MakeHyperNode("b", 1).ExactHyperNode("c").ExactNode("node-1").Obj(),
			hn:  testingtopo.MakeHyperNode("b", 1).ExactHyperNode("c").ExactNode("node-1").ExactHyperNode("a").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, memberName("2"),
				`Invalid value: "a": the HyperNodes would form a cycle: b -> a -> b`)},
		},
		"a cycle over three HyperNodes": {
			hn: testingtopo.MakeHyperNode("c", 1).ExactNode("node-2").ExactHyperNode("a").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, memberName("1"),
				`Invalid value: "a": the HyperNodes would form a cycle: c -> a -> b -> c`)},
		},
		"a new HyperNode above existing ones": {
			hn: testingtopo.MakeHyperNode("spine", 2).ExactHyperNode("a").ExactHyperNode("c").Obj(),
		},
		"a member that does not exist yet": {
			hn: testingtopo.MakeHyperNode("c", 1).ExactHyperNode("d").Obj(),
		},
		"a node named as a HyperNode above": {
			hn: testingtopo.MakeHyperNode("c", 1).ExactNode("a").Obj(),
		},
		"an existing cycle, left as it was": {
			old: testingtopo.MakeHyperNode("loop-x", 1).ExactHyperNode("loop-y").Obj(),
			hn:  testingtopo.MakeHyperNode("loop-x", 2).ExactHyperNode("loop-y").TierName("spine").Obj(),
		},
		"a member added on update": {
			old: testingtopo.MakeHyperNode("c", 1).ExactNode("node-2").Obj(),
			hn:  testingtopo.MakeHyperNode("c", 1).ExactNode("node-2").ExactHyperNode("b").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, memberName("1"),
				`Invalid value: "b": the HyperNodes would form a cycle: c -> b -> c`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := hypernode.NewWebhook(wt.Reader(t, existing...))
			var err error
			if tc.old == nil {
				_, err = w.ValidateCreate(t.Context(), tc.hn)
			} else {
				_, err = w.ValidateUpdate(t.Context(), tc.old, tc.hn)
			}
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("causes (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestCyclesConfirmed: a cycle the cache shows but the API server no
// longer has is not refused.
func TestCyclesConfirmed(t *testing.T) {
	cached := []client.Object{testingtopo.MakeHyperNode("a", 1).ExactHyperNode("b").Obj()}
	live := []client.Object{testingtopo.MakeHyperNode("a", 1).ExactNode("node-1").Obj()}
	w := hypernode.NewWebhook(wt.StaleReader(t, cached, live))
	_, err := w.ValidateCreate(t.Context(), testingtopo.MakeHyperNode("b", 2).ExactHyperNode("a").Obj())
	if diff := cmp.Diff([]metav1.StatusCause(nil), wt.Causes(t, err)); diff != "" {
		t.Errorf("causes (-want,+got):\n%s", diff)
	}
}
