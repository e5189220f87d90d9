package hypernode_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
			w := hypernode.Webhook{}
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
