package podgroup_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/webhooks/podgroup"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

func objects() []client.Object {
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plain"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a",
			Annotations: map[string]string{schedulingv1beta1.QueueNameAnnotation: "team-a"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "frozen",
			Annotations: map[string]string{schedulingv1beta1.QueueNameAnnotation: "closed"}}},
		testingsched.MakeQueue("root").Obj(),
		testingsched.MakeQueue("default").State(schedulingv1beta1.QueueStateOpen).Obj(),
		testingsched.MakeQueue("team-a").State(schedulingv1beta1.QueueStateOpen).Obj(),
		testingsched.MakeQueue("closed").State(schedulingv1beta1.QueueStateClosed).Obj(),
	}
}

func TestDefault(t *testing.T) {
	cases := map[string]struct {
		pg        *schedulingv1beta1.PodGroup
		wantQueue string
	}{
		"namespace without a default queue":        {pg: testingsched.MakePodGroup("pg", "plain").Obj(), wantQueue: "default"},
		"namespace with a default queue":           {pg: testingsched.MakePodGroup("pg", "team-a").Obj(), wantQueue: "team-a"},
		"namespace the webhook cannot find":        {pg: testingsched.MakePodGroup("pg", "unknown").Obj(), wantQueue: "default"},
		"a queue given is kept":                    {pg: testingsched.MakePodGroup("pg", "team-a").Queue("other").Obj(), wantQueue: "other"},
		"namespace default applies to empty queue": {pg: testingsched.MakePodGroup("pg", "frozen").Queue("").Obj(), wantQueue: "closed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := podgroup.NewWebhook(wt.Reader(t, objects()...))
			got := tc.pg.DeepCopy()
			if err := w.Default(t.Context(), got); err != nil {
				t.Fatal(err)
			}
			want := tc.pg.DeepCopy()
			want.Spec.Queue = tc.wantQueue
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Default (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestDefaultSubGroups(t *testing.T) {
	w := podgroup.NewWebhook(wt.Reader(t, objects()...))
	got := testingsched.MakePodGroup("pg", "plain").Queue("default").
		SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "racks", NetworkTopology: &schedulingv1beta1.NetworkTopologySpec{}}).Obj()
	if err := w.Default(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	want := []schedulingv1beta1.SubGroupPolicySpec{{
		Name:            "racks",
		NetworkTopology: &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode},
		MinSubGroups:    ptr.To[int32](0),
	}}
	if diff := cmp.Diff(want, got.Spec.SubGroupPolicy); diff != "" {
		t.Errorf("Default subGroupPolicy (-want,+got):\n%s", diff)
	}
}

func TestValidateCreate(t *testing.T) {
	cases := map[string]struct {
		pg   *schedulingv1beta1.PodGroup
		want []metav1.StatusCause
	}{
		"valid": {
			pg: testingsched.MakePodGroup("pg", "plain").MinMember(2).Queue("team-a").Obj(),
		},
		"queue that does not exist": {
			pg:   testingsched.MakePodGroup("pg", "plain").Queue("nope").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.queue", `Invalid value: "nope": queue does not exist; existing queues: closed, default, team-a`)},
		},
		"closed queue": {
			pg:   testingsched.MakePodGroup("pg", "plain").Queue("closed").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.queue", `Invalid value: "closed": queue is Closed: it accepts no new work until it is opened`)},
		},
		"the namespace's default queue is closed": {
			pg:   testingsched.MakePodGroup("pg", "frozen").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.queue", `Invalid value: "closed": queue is Closed: it accepts no new work until it is opened`)},
		},
		"PriorityClass that does not exist": {
			pg:   testingsched.MakePodGroup("pg", "plain").PriorityClassName("urgent").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.priorityClassName", `Invalid value: "urgent": PriorityClass does not exist`)},
		},
		"errors of the spec itself": {
			pg: testingsched.MakePodGroup("pg", "plain").
				SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "a"}).
				SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "a"}).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Duplicate, "spec.subGroupPolicy[1].name", `Duplicate value: "a"`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := podgroup.NewWebhook(wt.Reader(t, objects()...)).ValidateCreate(t.Context(), tc.pg)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate causes (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	inClosed := testingsched.MakePodGroup("pg", "plain").Queue("closed").MinMember(1).Obj()
	cases := map[string]struct {
		oldPG, newPG *schedulingv1beta1.PodGroup
		want         []metav1.StatusCause
	}{
		"a PodGroup of a closed queue may still change": {
			oldPG: inClosed,
			newPG: testingsched.MakePodGroup("pg", "plain").Queue("closed").MinMember(3).Obj(),
		},
		"moving into a closed queue": {
			oldPG: testingsched.MakePodGroup("pg", "plain").Queue("team-a").Obj(),
			newPG: testingsched.MakePodGroup("pg", "plain").Queue("closed").Obj(),
			want:  []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.queue", `Invalid value: "closed": queue is Closed: it accepts no new work until it is opened`)},
		},
		"a new PriorityClass must exist": {
			oldPG: inClosed,
			newPG: testingsched.MakePodGroup("pg", "plain").Queue("closed").MinMember(1).PriorityClassName("urgent").Obj(),
			want:  []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.priorityClassName", `Invalid value: "urgent": PriorityClass does not exist`)},
		},
		"the new spec is validated": {
			oldPG: inClosed,
			newPG: testingsched.MakePodGroup("pg", "plain").Queue("closed").MinMember(-1).Obj(),
			want:  []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.minMember", "Invalid value: -1: must be greater than or equal to 0")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := podgroup.NewWebhook(wt.Reader(t, objects()...)).ValidateUpdate(t.Context(), tc.oldPG, tc.newPG)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateUpdate causes (-want,+got):\n%s", diff)
			}
		})
	}
}
