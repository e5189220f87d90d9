package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	hntesting "github.com/caldera-sh/caldera/apis/topology/v1alpha1/testing"
)

// ignoreDetail compares errors by type and field only, so that the tests do
// not pin the wording of messages.
var ignoreDetail = cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail", "Origin", "CoveredByDeclarative")

func TestValidateHyperNode(t *testing.T) {
	cases := map[string]struct {
		hn   *topologyv1alpha1.HyperNode
		want field.ErrorList
	}{
		"leaf with every kind of node selector": {
			hn: hntesting.MakeHyperNode("rack-1", 1).
				ExactNode("node-0").
				RegexNodes("^rack1-node-[0-9]+$").
				LabelNodes(&metav1.LabelSelector{MatchLabels: map[string]string{"topology.example.com/rack": "rack-1"}}).
				Obj(),
		},
		"inner HyperNode": {
			hn: hntesting.MakeHyperNode("spine-a", 2).ExactHyperNode("rack-1").ExactHyperNode("rack-2").Obj(),
		},
		"node name that no node can have": {
			hn: hntesting.MakeHyperNode("rack-1", 1).ExactNode("Node_0").Obj(),
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "members").Index(0).Child("selector", "exactMatch", "name"), nil, ""),
			},
		},
		"pattern that does not compile": {
			hn: hntesting.MakeHyperNode("rack-1", 1).ExactNode("node-0").RegexNodes("node-[0-9").Obj(),
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "members").Index(1).Child("selector", "regexMatch", "pattern"), nil, ""),
			},
		},
		"label selector with an invalid operator": {
			hn: hntesting.MakeHyperNode("rack-1", 1).LabelNodes(&metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "rack", Operator: "Near", Values: []string{"1"}}},
			}).Obj(),
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "members").Index(0).Child("selector", "labelMatch", "matchExpressions").Index(0).Child("operator"), nil, ""),
			},
		},
		"label selector with an invalid key": {
			hn: hntesting.MakeHyperNode("rack-1", 1).LabelNodes(&metav1.LabelSelector{
				MatchLabels: map[string]string{"-rack": "1"},
			}).Obj(),
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "members").Index(0).Child("selector", "labelMatch", "matchLabels"), nil, ""),
			},
		},
		"HyperNode that lists itself": {
			hn: hntesting.MakeHyperNode("spine-a", 2).ExactHyperNode("rack-1").ExactHyperNode("spine-a").Obj(),
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "members").Index(1).Child("selector", "exactMatch", "name"), nil, ""),
			},
		},
		"node that has the HyperNode's own name is not a self reference": {
			hn: hntesting.MakeHyperNode("node-0", 1).ExactNode("node-0").Obj(),
		},
		"member listed twice": {
			hn: hntesting.MakeHyperNode("spine-a", 2).ExactHyperNode("rack-1").ExactHyperNode("rack-1").Obj(),
			want: field.ErrorList{
				field.Duplicate(field.NewPath("spec", "members").Index(1).Child("selector", "exactMatch", "name"), nil),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ValidateHyperNode(tc.hn)
			if diff := cmp.Diff(tc.want, got, ignoreDetail, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ValidateHyperNode() errors (-want,+got):\n%s", diff)
			}
		})
	}
}
