package validation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/apis/scheduling/v1beta1/validation"
)

// Errors are compared by type and field; the wording is not part of the
// contract.
var ignoreDetail = cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail", "Origin")

var res = testingsched.Resources

// queue returns a defaulted, valid queue to start a case from.
func queue(name string) *testingsched.QueueWrapper {
	return testingsched.MakeQueue(name).Weight(1).Reclaimable(true).Parent("root")
}

func TestValidateQueue(t *testing.T) {
	cases := map[string]struct {
		queue *schedulingv1beta1.Queue
		want  field.ErrorList
	}{
		"valid queue with every resource ordered": {
			queue: queue("team-a").
				Capability(res("cpu", "8", "memory", "16Gi", "example.com/fpga", "4")).
				Deserved(res("cpu", "4", "memory", "16Gi", "example.com/fpga", "2")).
				Guarantee(res("cpu", "2000m", "example.com/fpga", "2")).
				DequeueStrategy(schedulingv1beta1.DequeueStrategyFIFO).
				Hierarchy("root/eng/a", "1/2.5/3").Obj(),
		},
		"root queue without parent": {
			queue: testingsched.MakeQueue("root").Weight(1).Obj(),
		},
		"resources present on one side only are not compared": {
			queue: queue("q").Capability(res("cpu", "1")).Deserved(res("memory", "1Gi")).Guarantee(res("pods", "10")).Obj(),
		},
		"weight zero": {
			queue: queue("q").Weight(0).Obj(),
			want:  field.ErrorList{field.Invalid(field.NewPath("spec", "weight"), nil, "")},
		},
		"own parent": {
			queue: queue("q").Parent("q").Obj(),
			want:  field.ErrorList{field.Invalid(field.NewPath("spec", "parent"), nil, "")},
		},
		"root with a parent": {
			queue: testingsched.MakeQueue("root").Weight(1).Parent("default").Obj(),
			want:  field.ErrorList{field.Forbidden(field.NewPath("spec", "parent"), "")},
		},
		"parent that cannot be a queue name": {
			queue: queue("q").Parent("Team_A").Obj(),
			want:  field.ErrorList{field.Invalid(field.NewPath("spec", "parent"), nil, "")},
		},
		"deserved above capability for an extended resource the CRD does not compare": {
			queue: queue("q").Capability(res("example.com/fpga", "2")).Deserved(res("example.com/fpga", "3")).Obj(),
			want:  field.ErrorList{field.Invalid(field.NewPath("spec", "deserved").Key("example.com/fpga"), nil, "")},
		},
		"guarantee above deserved and capability": {
			queue: queue("q").Capability(res("cpu", "4")).Deserved(res("cpu", "4")).Guarantee(res("cpu", "4500m")).Obj(),
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "guarantee", "resource").Key("cpu"), nil, ""),
				field.Invalid(field.NewPath("spec", "guarantee", "resource").Key("cpu"), nil, ""),
			},
		},
		"negative quantities": {
			queue: queue("q").Capability(res("cpu", "-1")).Deserved(res("memory", "-1Gi")).
				ExtendCluster("east", 1, res("cpu", "-2")).Obj(),
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "capability").Key("cpu"), nil, ""),
				field.Invalid(field.NewPath("spec", "deserved").Key("memory"), nil, ""),
				field.Invalid(field.NewPath("spec", "extendClusters").Index(0).Child("capacity").Key("cpu"), nil, ""),
			},
		},
		"malformed resource name": {
			queue: queue("q").Guarantee(res("nvidia.com/gpu/a100", "1")).Obj(),
			want:  field.ErrorList{field.Invalid(field.NewPath("spec", "guarantee", "resource").Key("nvidia.com/gpu/a100"), nil, "")},
		},
		"unknown dequeue strategy": {
			queue: queue("q").DequeueStrategy("lifo").Obj(),
			want:  field.ErrorList{field.NotSupported[string](field.NewPath("spec", "dequeueStrategy"), nil, nil)},
		},
		"hierarchy with fewer weights than segments": {
			queue: queue("q").Hierarchy("root/eng/q", "1/2").Obj(),
			want: field.ErrorList{field.Invalid(
				field.NewPath("metadata", "annotations").Key(schedulingv1beta1.HierarchyWeightsAnnotation), nil, "")},
		},
		"hierarchy weights annotation without path": {
			queue: queue("q").Annotation(schedulingv1beta1.HierarchyWeightsAnnotation, "1/2").Obj(),
			want: field.ErrorList{field.Invalid(
				field.NewPath("metadata", "annotations").Key(schedulingv1beta1.HierarchyWeightsAnnotation), nil, "")},
		},
		"hierarchy weights that are not positive numbers": {
			queue: queue("q").Hierarchy("root/eng/q", "1/0/x").Obj(),
			want: field.ErrorList{
				field.Invalid(field.NewPath("metadata", "annotations").Key(schedulingv1beta1.HierarchyWeightsAnnotation), nil, ""),
				field.Invalid(field.NewPath("metadata", "annotations").Key(schedulingv1beta1.HierarchyWeightsAnnotation), nil, ""),
			},
		},
		"hierarchy weight that is not finite": {
			queue: queue("q").Hierarchy("root/q", "1/NaN").Obj(),
			want: field.ErrorList{field.Invalid(
				field.NewPath("metadata", "annotations").Key(schedulingv1beta1.HierarchyWeightsAnnotation), nil, "")},
		},
		"hierarchy path with an empty segment": {
			queue: queue("q").Hierarchy("root//q", "1/1/1").Obj(),
			want: field.ErrorList{field.Invalid(
				field.NewPath("metadata", "annotations").Key(schedulingv1beta1.HierarchyAnnotation), nil, "")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validation.ValidateQueue(tc.queue)
			if diff := cmp.Diff(tc.want, got, ignoreDetail); diff != "" {
				t.Errorf("ValidateQueue (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateQueueUpdate(t *testing.T) {
	rootQueue := func() *testingsched.QueueWrapper {
		return testingsched.MakeQueue("root").Weight(1).Capability(res("cpu", "64")).Deserved(res("cpu", "64"))
	}
	cases := map[string]struct {
		oldQueue, newQueue *schedulingv1beta1.Queue
		want               field.ErrorList
	}{
		"root weight and priority may change": {
			oldQueue: rootQueue().Obj(),
			newQueue: rootQueue().Weight(2).Priority(5).Obj(),
		},
		"root resources written differently but equal": {
			oldQueue: rootQueue().Obj(),
			newQueue: rootQueue().Capability(res("cpu", "64000m")).Obj(),
		},
		"root resources cannot change": {
			oldQueue: rootQueue().Obj(),
			newQueue: rootQueue().Capability(res("cpu", "128")).Deserved(res("cpu", "32")).Guarantee(res("cpu", "1")).Obj(),
			want: field.ErrorList{
				field.Forbidden(field.NewPath("spec", "capability"), ""),
				field.Forbidden(field.NewPath("spec", "deserved"), ""),
				field.Forbidden(field.NewPath("spec", "guarantee", "resource"), ""),
			},
		},
		"other queues' resources may change": {
			oldQueue: queue("q").Capability(res("cpu", "4")).Obj(),
			newQueue: queue("q").Capability(res("cpu", "8")).Obj(),
		},
		"the new object is validated": {
			oldQueue: queue("q").Obj(),
			newQueue: queue("q").Parent("q").Obj(),
			want:     field.ErrorList{field.Invalid(field.NewPath("spec", "parent"), nil, "")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validation.ValidateQueueUpdate(tc.newQueue, tc.oldQueue)
			if diff := cmp.Diff(tc.want, got, ignoreDetail); diff != "" {
				t.Errorf("ValidateQueueUpdate (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateQueueDeletion(t *testing.T) {
	cases := map[string]struct {
		queue *schedulingv1beta1.Queue
		want  field.ErrorList
	}{
		"ordinary queue": {queue: queue("team-a").Obj()},
		"root queue": {
			queue: testingsched.MakeQueue("root").Obj(),
			want:  field.ErrorList{field.Forbidden(field.NewPath("metadata", "name"), "")},
		},
		"default queue": {
			queue: queue("default").Obj(),
			want:  field.ErrorList{field.Forbidden(field.NewPath("metadata", "name"), "")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := validation.ValidateQueueDeletion(tc.queue)
			if diff := cmp.Diff(tc.want, got, ignoreDetail); diff != "" {
				t.Errorf("ValidateQueueDeletion (-want,+got):\n%s", diff)
			}
		})
	}
}
