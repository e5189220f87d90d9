package validation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/apis/scheduling/v1beta1/validation"
)

func podGroup() *testingsched.PodGroupWrapper {
	return testingsched.MakePodGroup("pg", "ns").Queue("default").MinMember(2)
}

func TestValidatePodGroup(t *testing.T) {
	spec := field.NewPath("spec")
	policy0 := spec.Child("subGroupPolicy").Index(0)
	cases := map[string]struct {
		podGroup *schedulingv1beta1.PodGroup
		want     field.ErrorList
	}{
		"valid gang with tasks, resources and sub-groups": {
			podGroup: podGroup().MinMember(4).MinTaskMember("ps", 1).MinTaskMember("worker", 3).
				PriorityClassName("high-priority").
				MinResources(res("cpu", "10", "nvidia.com/gpu", "3")).
				NetworkTopology(schedulingv1beta1.HardNetworkTopologyMode, 2).
				SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{
					Name:           "prefill",
					LabelSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"volcano.sh/role": "prefill"}},
					MatchLabelKeys: []string{"volcano.sh/shard-id"},
					SubGroupSize:   new(int32(4)),
					MinSubGroups:   new(int32(2)),
					NetworkTopology: &schedulingv1beta1.NetworkTopologySpec{
						Mode: schedulingv1beta1.SoftNetworkTopologyMode, HighestTierName: "rack",
					},
				}).Obj(),
		},
		"zero minMember and tasks are allowed": {
			podGroup: podGroup().MinMember(0).MinTaskMember("worker", 0).Obj(),
		},
		"negative minMember": {
			podGroup: podGroup().MinMember(-1).Obj(),
			want:     field.ErrorList{field.Invalid(spec.Child("minMember"), nil, "")},
		},
		"negative and unnamed task minimums": {
			podGroup: podGroup().MinTaskMember("worker", -2).MinTaskMember("", 1).Obj(),
			want: field.ErrorList{
				field.Invalid(spec.Child("minTaskMember").Key(""), nil, ""),
				field.Invalid(spec.Child("minTaskMember").Key("worker"), nil, ""),
			},
		},
		"queue and priority class that cannot be object names": {
			podGroup: podGroup().Queue("Team A").PriorityClassName("High_Priority").Obj(),
			want: field.ErrorList{
				field.Invalid(spec.Child("queue"), nil, ""),
				field.Invalid(spec.Child("priorityClassName"), nil, ""),
			},
		},
		"negative minResources": {
			podGroup: podGroup().MinResources(res("memory", "-1Gi")).Obj(),
			want:     field.ErrorList{field.Invalid(spec.Child("minResources").Key("memory"), nil, "")},
		},
		"both tier limits": {
			podGroup: podGroup().NetworkTopologySpec(schedulingv1beta1.NetworkTopologySpec{
				Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: new(int32(1)), HighestTierName: "rack",
			}).Obj(),
			want: field.ErrorList{field.Forbidden(spec.Child("networkTopology", "highestTierName"), "")},
		},
		"unknown mode and negative tier": {
			podGroup: podGroup().NetworkTopology("strict", -1).Obj(),
			want: field.ErrorList{
				field.NotSupported[string](spec.Child("networkTopology", "mode"), nil, nil),
				field.Invalid(spec.Child("networkTopology", "highestTierAllowed"), nil, ""),
			},
		},
		"sub-group policies without a name or with a duplicate name": {
			podGroup: podGroup().
				SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{}).
				SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "w"}).
				SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "w"}).Obj(),
			want: field.ErrorList{
				field.Required(policy0.Child("name"), ""),
				field.Duplicate(spec.Child("subGroupPolicy").Index(2).Child("name"), nil),
			},
		},
		"sub-group policy with bad sizes, selector, keys and topology": {
			podGroup: podGroup().SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{
				Name:         "w",
				SubGroupSize: new(int32(0)),
				MinSubGroups: new(int32(-1)),
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "role", Operator: metav1.LabelSelectorOpIn},
				}},
				MatchLabelKeys:  []string{"shard id"},
				NetworkTopology: &schedulingv1beta1.NetworkTopologySpec{HighestTierAllowed: new(int32(1)), HighestTierName: "rack"},
			}).Obj(),
			want: field.ErrorList{
				field.Invalid(policy0.Child("subGroupSize"), nil, ""),
				field.Invalid(policy0.Child("minSubGroups"), nil, ""),
				field.Required(policy0.Child("labelSelector", "matchExpressions").Index(0).Child("values"), ""),
				field.Invalid(policy0.Child("matchLabelKeys").Index(0), nil, ""),
				field.Forbidden(policy0.Child("networkTopology", "highestTierName"), ""),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validation.ValidatePodGroup(tc.podGroup)
			if diff := cmp.Diff(tc.want, got, ignoreDetail); diff != "" {
				t.Errorf("ValidatePodGroup (-want,+got):\n%s", diff)
			}
		})
	}
}
