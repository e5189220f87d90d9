package controller

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
)

// TestMetrics: a decision's holds by queue and rule, its releases, the
// clusters' readiness; a second registration shares the collectors; the
// holds of a later decision replace the earlier ones.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := NewMetrics(reg)
	if err != nil {
		t.Fatalf("registering twice: %v", err)
	}
	s := &dispatch.Snapshot{
		Clusters: []dispatch.Cluster{{Name: "a", Ready: true}, {Name: "b"}},
		Bindings: []*dispatch.Binding{{ID: "ns/j1", Queue: "train"}, {ID: "ns/j2", Queue: "train"}, {ID: "ns/j3", Queue: "eval"}, {ID: "ns/j4", Queue: "eval"}},
	}
	dec := &dispatch.Decision{
		Releases: []dispatch.Release{{ID: "ns/j4", Cluster: "a"}},
		Holds: map[string]dispatch.Hold{
			"ns/j1": {Rule: dispatch.RuleCapability}, "ns/j2": {Rule: dispatch.RuleCapability}, "ns/j3": {Rule: dispatch.RuleNoClusterFits},
		},
	}
	m.observe(s, dec, 3*time.Millisecond, nil)
	again.observe(nil, nil, time.Millisecond, errors.New("conflict"))
	want := `
# HELP caldera_global_decisions_total Dispatch decisions made, by result: ok, or error (a release, mark or resize that failed; the next change decides again).
# TYPE caldera_global_decisions_total counter
caldera_global_decisions_total{result="error"} 1
caldera_global_decisions_total{result="ok"} 1
# HELP caldera_global_held_bindings Bindings of queued work held after the last decision, by queue and by the rule that holds them (QueueCapability, NoClusterFits, GangShortfall, DataNotResolved, ...).
# TYPE caldera_global_held_bindings gauge
caldera_global_held_bindings{queue="eval",reason="NoClusterFits"} 1
caldera_global_held_bindings{queue="train",reason="QueueCapability"} 2
# HELP caldera_global_member_clusters Member clusters in the last decision, by readiness: ready or not_ready.
# TYPE caldera_global_member_clusters gauge
caldera_global_member_clusters{state="not_ready"} 1
caldera_global_member_clusters{state="ready"} 1
# HELP caldera_global_released_bindings_total Bindings released (placed in a member), by queue.
# TYPE caldera_global_released_bindings_total counter
caldera_global_released_bindings_total{queue="eval"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "caldera_global_decisions_total", "caldera_global_held_bindings",
		"caldera_global_member_clusters", "caldera_global_released_bindings_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "caldera_global_decision_duration_seconds"); n != 1 {
		t.Errorf("%d duration series", n)
	}
	m.observe(s, &dispatch.Decision{Holds: map[string]dispatch.Hold{"ns/j3": {Rule: dispatch.RuleGang}}}, time.Millisecond, nil)
	if n := testutil.CollectAndCount(reg, "caldera_global_held_bindings"); n != 1 {
		t.Errorf("%d held series after a decision holding one", n)
	}
}
