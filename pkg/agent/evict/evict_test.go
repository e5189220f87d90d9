package evict

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/caldera-sh/caldera/pkg/agent/config"
)

func TestPressure(t *testing.T) {
	cfg, _ := (*config.Configuration)(nil).ForNode(nil) // cpu 80/30, memory 60/30
	var p Pressure
	for i, tc := range []struct {
		u        Usage
		over     bool
		resource string
		active   bool
	}{
		{Usage{50, 50}, false, "", false},
		{Usage{85, 50}, true, "cpu", true},
		{Usage{50, 50}, false, "", true}, // between the watermarks: still tainted
		{Usage{20, 65}, true, "memory", true},
		{Usage{20, 40}, false, "", true},
		{Usage{20, 20}, false, "", false}, // both under their low watermarks
	} {
		over, res := p.Update(tc.u, cfg)
		if over != tc.over || res != tc.resource || p.Active != tc.active {
			t.Errorf("reading %d %+v: over %v %q active %v, want %v %q %v", i, tc.u, over, res, p.Active, tc.over, tc.resource, tc.active)
		}
	}
}

func TestOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(name string, prio int32, started time.Duration) Candidate {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.PodSpec{Priority: &prio}}
		st := metav1.NewTime(t0.Add(started))
		p.Status.StartTime = &st
		return CandidateOf(p)
	}
	cands := []Candidate{pod("old-low", 0, 0), pod("high", 100, time.Hour), pod("new-low", 0, time.Hour), pod("mid", 10, 2*time.Hour)}
	Order(cands)
	var got []string
	for _, c := range cands {
		got = append(got, c.Pod.Name)
	}
	if diff := cmp.Diff([]string{"new-low", "old-low", "mid", "high"}, got); diff != "" {
		t.Errorf("order (-want,+got):\n%s", diff)
	}
}

func TestLimiter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var l Limiter
	for i, tc := range []struct {
		at   time.Duration
		want bool
	}{{0, true}, {5 * time.Second, false}, {10 * time.Second, true}, {19 * time.Second, false}, {20 * time.Second, true}} {
		if got := l.Allow(t0.Add(tc.at), 10*time.Second); got != tc.want {
			t.Errorf("eviction %d at %v: %v, want %v", i, tc.at, got, tc.want)
		}
	}
}
