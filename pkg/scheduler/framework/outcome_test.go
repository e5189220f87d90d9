package framework

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

func TestBlockersInReadingOrder(t *testing.T) {
	cases := map[string]struct {
		added []*Reason
		want  *Reason
	}{
		"none": {},
		"one stands alone": {
			added: []*Reason{Reasonf("NotEnoughResources", "task t-0: 0/3 nodes are available")},
			want:  &Reason{Type: "NotEnoughResources", Message: "task t-0: 0/3 nodes are available"},
		},
		"queue limits before placement before preemption, whatever the order they come in": {
			added: []*Reason{
				Reasonf("PreemptionPending", "evicting 1 pods").Of(KindPreemption),
				Reasonf("NotEnoughResources", "38 of 50 tasks placeable").Of(KindPlacement),
				Reasonf("QueueCapabilityExceeded", "queue q would hold cpu 12").Of(KindQueue),
				Reasonf("QueueClosed", "queue q is Closed").Of(KindJob),
			},
			want: &Reason{Type: "QueueClosed", Kind: KindJob, Message: "QueueClosed: queue q is Closed; " +
				"QueueCapabilityExceeded: queue q would hold cpu 12; " +
				"NotEnoughResources: 38 of 50 tasks placeable; " +
				"PreemptionPending: evicting 1 pods"},
		},
		"the first reason of a type stands": {
			added: []*Reason{Reasonf("GangShortfall", "from allocate"), Reasonf("GangShortfall", "from preempt")},
			want:  &Reason{Type: "GangShortfall", Message: "from allocate"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ssn := OpenSession(t.Context(), api.NewSnapshot(nil, nil, nil), nil, Options{})
			for _, r := range tc.added {
				ssn.Block("ns/j", r)
			}
			if diff := cmp.Diff(tc.want, ssn.Outcome("ns/j").Unschedulable()); diff != "" {
				t.Errorf("summary (-want,+got):\n%s", diff)
			}
		})
	}
}
