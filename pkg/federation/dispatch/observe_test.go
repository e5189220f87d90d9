package dispatch

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestObserve(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	g := Graces{Claim: 30 * time.Second, ApplyFailure: 2 * time.Minute, Report: 10 * time.Second}
	hold := &Hold{Rule: RuleData, Message: "claim c waits"}
	type want struct {
		Queue             string
		Priority          int32
		Clusters          []string
		Preferred         []string
		Blocked           *Hold
		Released, Refused bool
		Reported          bool
		Finished          bool
		Gang              string
	}
	for _, tc := range []struct {
		name string
		o    Observation
		// created is how long before now the binding was created.
		created time.Duration
		// mem is the memory before; after checks it afterwards.
		mem   Memory
		want  want
		after func(t *testing.T, m *Memory)
	}{
		{name: "held work keeps its own queue and priority",
			o:    Observation{Queue: "q", Priority: 5, Suspended: true},
			want: want{Queue: "q", Priority: 5}},
		{name: "its Job's queue, priority and gang win",
			o:    Observation{Queue: "q", Priority: 5, Suspended: true, Job: &JobFacts{Queue: "jq", Priority: 9, Gang: "ns/hj", GangSize: 2, GangMin: 2}},
			want: want{Queue: "jq", Priority: 9, Gang: "ns/hj"}},
		{name: "a Job with no queue of its own keeps the binding's",
			o:    Observation{Queue: "q", Suspended: true, Job: &JobFacts{Priority: 1, Finished: true}},
			want: want{Queue: "q", Priority: 1, Finished: true}},
		{name: "data required narrows the placement's clusters",
			o:    Observation{Queue: "q", Suspended: true, Allowed: []string{"a", "b"}, Data: &DataConstraint{Required: []string{"b", "c"}}},
			want: want{Queue: "q", Clusters: []string{"b"}}},
		{name: "data required where the placement allows none leaves no cluster",
			o:    Observation{Queue: "q", Suspended: true, Allowed: []string{"a"}, Data: &DataConstraint{Required: []string{"c"}}},
			want: want{Queue: "q", Clusters: []string{}}},
		{name: "data preferred and held",
			o:    Observation{Queue: "q", Suspended: true, Data: &DataConstraint{Preferred: []string{"a"}, Blocked: hold}},
			want: want{Queue: "q", Preferred: []string{"a"}, Blocked: hold}},
		{name: "a claim admission saw holds it within the grace",
			o: Observation{Queue: "q", Suspended: true, ClaimAwaited: "c"}, created: 10 * time.Second,
			want: want{Queue: "q", Blocked: &Hold{Rule: RuleData, Message: "waiting to see DataSourceClaim c of the workload"}}},
		{name: "and no longer after it",
			o: Observation{Queue: "q", Suspended: true, ClaimAwaited: "c"}, created: 31 * time.Second,
			want: want{Queue: "q"}},
		{name: "not suspended is released (Karmada schedules it)",
			o:    Observation{Queue: "q"},
			want: want{Queue: "q", Released: true}},
		{name: "suspended with a cluster is released (placed by the dispatcher) and no longer planned",
			o: Observation{Queue: "q", Suspended: true, Cluster: "a"}, mem: Memory{Planned: map[string]string{"ns/b": "a"}, Released: map[string]bool{"ns/b": true}},
			want: want{Queue: "q", Released: true},
			after: func(t *testing.T, m *Memory) {
				if len(m.Planned)+len(m.Released) != 0 {
					t.Errorf("memory kept %v %v", m.Planned, m.Released)
				}
			}},
		{name: "released by the dispatcher though the cache still shows it held",
			o: Observation{Queue: "q", Suspended: true}, mem: Memory{Released: map[string]bool{"ns/b": true}},
			want: want{Queue: "q", Released: true}},
		{name: "a refusal counts only after the grace",
			o: Observation{Queue: "q", Suspended: true, Cluster: "a", Refusal: "denied", ClusterReady: true}, mem: Memory{RefusedSince: map[string]time.Time{"ns/b": t0.Add(-time.Minute)}},
			want: want{Queue: "q", Released: true}},
		{name: "a refusal past the grace counts",
			o: Observation{Queue: "q", Suspended: true, Cluster: "a", Refusal: "denied", ClusterReady: true}, mem: Memory{RefusedSince: map[string]time.Time{"ns/b": t0.Add(-3 * time.Minute)}},
			want: want{Queue: "q", Released: true, Refused: true}},
		{name: "a member not Ready refuses nothing, and its refusal's clock restarts",
			o: Observation{Queue: "q", Suspended: true, Cluster: "a", Refusal: "denied"}, mem: Memory{RefusedSince: map[string]time.Time{"ns/b": t0.Add(-3 * time.Minute)}},
			want: want{Queue: "q", Released: true},
			after: func(t *testing.T, m *Memory) {
				if _, ok := m.RefusedSince["ns/b"]; ok {
					t.Error("refusal still remembered")
				}
			}},
		{name: "a first refusal starts the clock",
			o:    Observation{Queue: "q", Suspended: true, Cluster: "a", Refusal: "denied", ClusterReady: true},
			want: want{Queue: "q", Released: true},
			after: func(t *testing.T, m *Memory) {
				if !m.RefusedSince["ns/b"].Equal(t0) {
					t.Errorf("refused since %v", m.RefusedSince["ns/b"])
				}
			}},
		{name: "pods in the member are reported after the grace",
			o: Observation{Queue: "q", Suspended: true, Cluster: "a", HasPods: true}, mem: Memory{PodsSeen: map[string]time.Time{"ns/b": t0.Add(-11 * time.Second)}},
			want: want{Queue: "q", Released: true, Reported: true}},
		{name: "pods just seen are not reported yet",
			o:    Observation{Queue: "q", Suspended: true, Cluster: "a", HasPods: true},
			want: want{Queue: "q", Released: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Binding{ID: "ns/b", Created: t0.Add(-tc.created), Queue: "stale", Blocked: &Hold{}, Refused: true, Reported: true}
			m := tc.mem
			Observe(b, tc.o, t0, g, &m)
			got := want{Queue: b.Queue, Priority: b.Priority, Clusters: b.Clusters, Preferred: b.Preferred, Blocked: b.Blocked,
				Released: b.Released, Refused: b.Refused, Reported: b.Reported, Finished: b.Finished, Gang: b.Gang}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("binding (-want,+got):\n%s", diff)
			}
			if tc.after != nil {
				tc.after(t, &m)
			}
		})
	}
}

func TestMemoryForget(t *testing.T) {
	now := time.Now()
	m := Memory{Released: map[string]bool{"a": true, "gone": true}, Planned: map[string]string{"gone": "x"},
		RefusedSince: map[string]time.Time{"gone": now}, PodsSeen: map[string]time.Time{"a": now, "gone": now}}
	m.Forget(func(id string) bool { return id == "a" })
	want := Memory{Released: map[string]bool{"a": true}, Planned: map[string]string{}, RefusedSince: map[string]time.Time{}, PodsSeen: map[string]time.Time{"a": now}}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("memory (-want,+got):\n%s", diff)
	}
}
