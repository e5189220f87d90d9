package podgroup

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingscheduling "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
)

func TestGroupName(t *testing.T) {
	rs := makeReplicaSet("ns", "web-5d9")
	cases := map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"a pod without owner has a group of its own": {
			pod:  makePod("ns", "p").Obj(),
			want: "podgroup-uid-p",
		},
		"a pod of a ReplicaSet shares the ReplicaSet's group": {
			pod:  rs.Owns(makePod("ns", "web-5d9-x")).Obj(),
			want: "podgroup-uid-web-5d9",
		},
		"an owner that is not the controller does not count": {
			pod: func() *corev1.Pod {
				p := makePod("ns", "p").Obj()
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "c", UID: "uid-c"}}
				return p
			}(),
			want: "podgroup-uid-p",
		},
		"any controller kind groups its pods": {
			pod:  makePod("ns", "step").ControlledBy("argoproj.io/v1alpha1", "Workflow", "wf", "uid-wf").Obj(),
			want: "podgroup-uid-wf",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GroupName(tc.pod)); diff != "" {
				t.Errorf("GroupName (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestParseMinMember(t *testing.T) {
	cases := map[string]struct {
		value   string
		want    int32
		wantErr string
	}{
		"one":           {value: "1", want: 1},
		"three":         {value: "3", want: 3},
		"largest":       {value: "2147483647", want: 2147483647},
		"empty":         {value: "", wantErr: `invalid scheduling.volcano.sh/group-min-member annotation: "" is not a whole number`},
		"word":          {value: "three", wantErr: `invalid scheduling.volcano.sh/group-min-member annotation: "three" is not a whole number`},
		"fraction":      {value: "2.5", wantErr: `invalid scheduling.volcano.sh/group-min-member annotation: "2.5" is not a whole number`},
		"spaces":        {value: " 3", wantErr: `invalid scheduling.volcano.sh/group-min-member annotation: " 3" is not a whole number`},
		"zero":          {value: "0", wantErr: `invalid scheduling.volcano.sh/group-min-member annotation: "0" must be at least 1`},
		"negative":      {value: "-2", wantErr: `invalid scheduling.volcano.sh/group-min-member annotation: "-2" must be at least 1`},
		"beyond int32":  {value: "2147483648", wantErr: `invalid scheduling.volcano.sh/group-min-member annotation: "2147483648" must be at most 2147483647`},
		"beyond int64":  {value: "99999999999999999999", wantErr: `invalid scheduling.volcano.sh/group-min-member annotation: "99999999999999999999" is not a whole number`},
		"leading zeros": {value: "007", want: 7},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseMinMember(tc.value)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				if !errors.Is(err, ErrInvalidMinMember) {
					t.Errorf("error %v does not wrap ErrInvalidMinMember", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseMinMember (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	rs := makeReplicaSet("ns", "web")
	podOwner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "uid-p", Controller: new(true)}
	rsOwner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "uid-web", Controller: new(true)}
	managed := map[string]string{ManagedByLabel: ManagedByValue}
	rl := func(pairs ...string) *corev1.ResourceList { r := testingscheduling.Resources(pairs...); return &r }

	cases := map[string]struct {
		pod       *corev1.Pod
		workload  Workload
		namespace map[string]string
		want      *schedulingv1beta1.PodGroup
		wantErr   error
	}{
		"plain pod: a group of one in the default queue, owned by the pod": {
			pod: makePod("ns", "p").Req("cpu", "2", "memory", "1Gi").PriorityClass("high").Obj(),
			want: &schedulingv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-p", Labels: managed, OwnerReferences: []metav1.OwnerReference{podOwner}},
				Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "default", PriorityClassName: "high",
					MinResources: rl("cpu", "2", "memory", "1Gi")},
			},
		},
		"plain pod: the queue from its annotation": {
			pod:       makePod("ns", "p").Annotation(schedulingv1beta1.QueueNameAnnotation, "research").Obj(),
			namespace: map[string]string{schedulingv1beta1.QueueNameAnnotation: "team"},
			want: &schedulingv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-p", Labels: managed, OwnerReferences: []metav1.OwnerReference{podOwner}},
				Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "research"},
			},
		},
		"plain pod: the namespace's queue when the pod names none": {
			pod:       makePod("ns", "p").Obj(),
			namespace: map[string]string{schedulingv1beta1.QueueNameAnnotation: "team"},
			want: &schedulingv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-p", Labels: managed, OwnerReferences: []metav1.OwnerReference{podOwner}},
				Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "team"},
			},
		},
		"plain pod: init containers count as the scheduler counts them": {
			pod: makePod("ns", "p").Req("cpu", "1").InitReq("cpu", "3", "memory", "2Gi").Obj(),
			want: &schedulingv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-p", Labels: managed, OwnerReferences: []metav1.OwnerReference{podOwner}},
				Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "default", MinResources: rl("cpu", "3", "memory", "2Gi")},
			},
		},
		"workload pod: minMember from the workload, minResources times minMember, owned by the workload": {
			pod: rs.Owns(makePod("ns", "web-x").Req("cpu", "4")).Obj(),
			workload: Workload{Annotations: map[string]string{
				schedulingv1beta1.GroupMinMemberAnnotation: "3",
				"deployment.kubernetes.io/revision":        "2",
			}},
			want: &schedulingv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-web", Labels: managed, OwnerReferences: []metav1.OwnerReference{rsOwner}},
				Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 3, Queue: "default", MinResources: rl("cpu", "12")},
			},
		},
		"workload pod: the queue from the workload's label when the pod names none": {
			pod:      rs.Owns(makePod("ns", "web-x")).Obj(),
			workload: Workload{Labels: map[string]string{schedulingv1beta1.QueueNameLabel: "batch"}},
			want: &schedulingv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-web", Labels: managed, OwnerReferences: []metav1.OwnerReference{rsOwner}},
				Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "batch"},
			},
		},
		"workload pod: the pod's queue wins over the workload's": {
			pod: rs.Owns(makePod("ns", "web-x").Label(schedulingv1beta1.QueueNameLabel, "from-pod")).Obj(),
			workload: Workload{Annotations: map[string]string{
				schedulingv1beta1.QueueNameAnnotation: "from-workload",
			}},
			want: &schedulingv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-web", Labels: map[string]string{
					ManagedByLabel: ManagedByValue, schedulingv1beta1.QueueNameLabel: "from-pod",
				}, OwnerReferences: []metav1.OwnerReference{rsOwner}},
				Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "from-pod"},
			},
		},
		"volcano.sh/ keys are inherited, the pod's over the workload's": {
			pod: rs.Owns(makePod("ns", "web-x").
				Annotation(schedulingv1beta1.PreemptableKey, "false").
				Annotation("unrelated", "x").
				Label(schedulingv1beta1.CooldownTimeKey, "10m")).Obj(),
			workload: Workload{Annotations: map[string]string{
				schedulingv1beta1.PreemptableKey:           "true",
				schedulingv1beta1.SLAWaitingTimeKey:        "1h",
				schedulingv1beta1.GroupMinMemberAnnotation: "2",
			}},
			want: &schedulingv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-web",
					Labels: map[string]string{ManagedByLabel: ManagedByValue, schedulingv1beta1.CooldownTimeKey: "10m"},
					Annotations: map[string]string{
						schedulingv1beta1.PreemptableKey:    "false",
						schedulingv1beta1.SLAWaitingTimeKey: "1h",
					},
					OwnerReferences: []metav1.OwnerReference{rsOwner}},
				Spec: schedulingv1beta1.PodGroupSpec{MinMember: 2, Queue: "default"},
			},
		},
		"a bad group-min-member is an error, not a group of one": {
			pod:      rs.Owns(makePod("ns", "web-x")).Obj(),
			workload: Workload{Annotations: map[string]string{schedulingv1beta1.GroupMinMemberAnnotation: "three"}},
			wantErr:  ErrInvalidMinMember,
		},
		"group-min-member on the pod itself is not read": {
			pod: makePod("ns", "p").Annotation(schedulingv1beta1.GroupMinMemberAnnotation, "4").Obj(),
			want: &schedulingv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-p", Labels: managed, OwnerReferences: []metav1.OwnerReference{podOwner}},
				Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "default"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Desired(tc.pod, tc.workload, tc.namespace)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Desired (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSpecUpdate(t *testing.T) {
	rl := func(pairs ...string) *corev1.ResourceList { r := testingscheduling.Resources(pairs...); return &r }
	current := &schedulingv1beta1.PodGroup{Spec: schedulingv1beta1.PodGroupSpec{
		MinMember: 3, Queue: "q", PriorityClassName: "high", MinResources: rl("cpu", "12"),
	}}
	cases := map[string]struct {
		desired     schedulingv1beta1.PodGroupSpec
		want        schedulingv1beta1.PodGroupSpec
		wantChanged bool
	}{
		"same gang: no change": {
			desired: schedulingv1beta1.PodGroupSpec{MinMember: 3, Queue: "q", MinResources: rl("cpu", "12000m")},
			want:    current.Spec,
		},
		"a new minMember changes minMember and minResources only": {
			desired:     schedulingv1beta1.PodGroupSpec{MinMember: 4, Queue: "other", MinResources: rl("cpu", "16")},
			want:        schedulingv1beta1.PodGroupSpec{MinMember: 4, Queue: "q", PriorityClassName: "high", MinResources: rl("cpu", "16")},
			wantChanged: true,
		},
		"requests dropped to none": {
			desired:     schedulingv1beta1.PodGroupSpec{MinMember: 3},
			want:        schedulingv1beta1.PodGroupSpec{MinMember: 3, Queue: "q", PriorityClassName: "high"},
			wantChanged: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, changed := SpecUpdate(current, &schedulingv1beta1.PodGroup{Spec: tc.desired})
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if !changed {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SpecUpdate (-want,+got):\n%s", diff)
			}
		})
	}
}
