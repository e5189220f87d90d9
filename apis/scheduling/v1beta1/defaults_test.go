package v1beta1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
)

func TestSetDefaultsQueue(t *testing.T) {
	cases := map[string]struct {
		queue *schedulingv1beta1.Queue
		want  *schedulingv1beta1.Queue
	}{
		"empty queue gets weight, reclaimable and the root parent": {
			queue: testingsched.MakeQueue("team-a").Obj(),
			want:  testingsched.MakeQueue("team-a").Weight(1).Reclaimable(true).Parent("root").Obj(),
		},
		"root queue gets no parent": {
			queue: testingsched.MakeQueue("root").Obj(),
			want:  testingsched.MakeQueue("root").Weight(1).Reclaimable(true).Obj(),
		},
		"set fields are kept": {
			queue: testingsched.MakeQueue("team-a-train").Weight(3).Reclaimable(false).Parent("team-a").Obj(),
			want:  testingsched.MakeQueue("team-a-train").Weight(3).Reclaimable(false).Parent("team-a").Obj(),
		},
		"hierarchy annotations are rooted": {
			queue: testingsched.MakeQueue("ml").Hierarchy("eng/ml", "2/8").Obj(),
			want: testingsched.MakeQueue("ml").Weight(1).Reclaimable(true).Parent("root").
				Hierarchy("root/eng/ml", "1/2/8").Obj(),
		},
		"rooted hierarchy annotations are kept": {
			queue: testingsched.MakeQueue("ml").Hierarchy("root/eng/ml", "1/2/8").Obj(),
			want: testingsched.MakeQueue("ml").Weight(1).Reclaimable(true).Parent("root").
				Hierarchy("root/eng/ml", "1/2/8").Obj(),
		},
		"a first segment that merely starts with root is rooted": {
			queue: testingsched.MakeQueue("a").Hierarchy("rooted/a", "3/4").Obj(),
			want: testingsched.MakeQueue("a").Weight(1).Reclaimable(true).Parent("root").
				Hierarchy("root/rooted/a", "1/3/4").Obj(),
		},
		"a lone hierarchy annotation is left for validation": {
			queue: testingsched.MakeQueue("a").Annotation(schedulingv1beta1.HierarchyAnnotation, "eng/a").Obj(),
			want: testingsched.MakeQueue("a").Weight(1).Reclaimable(true).Parent("root").
				Annotation(schedulingv1beta1.HierarchyAnnotation, "eng/a").Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.queue.DeepCopy()
			schedulingv1beta1.SetDefaults_Queue(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SetDefaults_Queue (-want,+got):\n%s", diff)
			}
			again := got.DeepCopy()
			schedulingv1beta1.SetDefaults_Queue(again)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("SetDefaults_Queue is not idempotent (-once,+twice):\n%s", diff)
			}
		})
	}
}

func TestSetDefaultsPodGroup(t *testing.T) {
	cases := map[string]struct {
		podGroup             *schedulingv1beta1.PodGroup
		namespaceAnnotations map[string]string
		want                 *schedulingv1beta1.PodGroup
	}{
		"empty queue becomes default": {
			podGroup: testingsched.MakePodGroup("pg", "ns").MinMember(2).Obj(),
			want:     testingsched.MakePodGroup("pg", "ns").MinMember(2).Queue("default").Obj(),
		},
		"set queue is kept": {
			podGroup: testingsched.MakePodGroup("pg", "ns").Queue("team-a").Obj(),
			want:     testingsched.MakePodGroup("pg", "ns").Queue("team-a").Obj(),
		},
		"namespace annotation picks the queue": {
			podGroup:             testingsched.MakePodGroup("pg", "ns").Obj(),
			namespaceAnnotations: map[string]string{schedulingv1beta1.QueueNameAnnotation: "team-b"},
			want:                 testingsched.MakePodGroup("pg", "ns").Queue("team-b").Obj(),
		},
		"set queue wins over the namespace annotation": {
			podGroup:             testingsched.MakePodGroup("pg", "ns").Queue("team-a").Obj(),
			namespaceAnnotations: map[string]string{schedulingv1beta1.QueueNameAnnotation: "team-b"},
			want:                 testingsched.MakePodGroup("pg", "ns").Queue("team-a").Obj(),
		},
		"empty namespace annotation falls back to default": {
			podGroup:             testingsched.MakePodGroup("pg", "ns").Obj(),
			namespaceAnnotations: map[string]string{schedulingv1beta1.QueueNameAnnotation: ""},
			want:                 testingsched.MakePodGroup("pg", "ns").Queue("default").Obj(),
		},
		"network topology mode and minSubGroups are defaulted": {
			podGroup: testingsched.MakePodGroup("pg", "ns").Queue("q").
				NetworkTopologySpec(schedulingv1beta1.NetworkTopologySpec{HighestTierName: "rack"}).
				SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{
					Name:            "workers",
					NetworkTopology: &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.SoftNetworkTopologyMode},
				}).
				SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{
					Name:            "ps",
					NetworkTopology: &schedulingv1beta1.NetworkTopologySpec{},
					MinSubGroups:    new(int32(2)),
				}).Obj(),
			want: testingsched.MakePodGroup("pg", "ns").Queue("q").
				NetworkTopologySpec(schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierName: "rack"}).
				SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{
					Name:            "workers",
					NetworkTopology: &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.SoftNetworkTopologyMode},
					MinSubGroups:    new(int32(0)),
				}).
				SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{
					Name:            "ps",
					NetworkTopology: &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode},
					MinSubGroups:    new(int32(2)),
				}).Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.podGroup.DeepCopy()
			if tc.namespaceAnnotations == nil {
				schedulingv1beta1.SetDefaults_PodGroup(got)
			} else {
				schedulingv1beta1.SetPodGroupDefaultsInNamespace(got, tc.namespaceAnnotations)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("defaulting (-want,+got):\n%s", diff)
			}
			again := got.DeepCopy()
			schedulingv1beta1.SetPodGroupDefaultsInNamespace(again, tc.namespaceAnnotations)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("defaulting is not idempotent (-once,+twice):\n%s", diff)
			}
		})
	}
}
