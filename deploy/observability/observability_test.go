// Package observability holds the Grafana dashboard; its test ties the
// dashboard and docs/metrics.md to the metrics the code declares.
package observability

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	agentmetrics "github.com/caldera-sh/caldera/pkg/agent/metrics"
	dispatchcontroller "github.com/caldera-sh/caldera/pkg/federation/dispatch/controller"
	schedulermetrics "github.com/caldera-sh/caldera/pkg/scheduler/metrics"
)

// recorder is a Registerer that keeps the names of what is registered.
type recorder struct{ names map[string]bool }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *recorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			r.names[m[1]] = true
		}
	}
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

// declared are the names of every metric Caldera's code declares.
func declared(t *testing.T) map[string]bool {
	t.Helper()
	r := &recorder{names: map[string]bool{}}
	if err := schedulermetrics.New().Register(r); err != nil {
		t.Fatal(err)
	}
	agentmetrics.New(r)
	if _, err := dispatchcontroller.NewMetrics(r); err != nil {
		t.Fatal(err)
	}
	if len(r.names) < 20 {
		t.Fatalf("only %d metrics declared: %v", len(r.names), r.names)
	}
	return r.names
}

// TestMetricsDocumented: every declared metric is in docs/metrics.md.
func TestMetricsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range declared(t) {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/metrics.md does not document %s", name)
		}
	}
}

var metricName = regexp.MustCompile(`\b(?:volcano|caldera)_[a-z0-9_]+\b`)

// TestDashboard: the dashboard is JSON Grafana takes (panels with
// queries), and reads only declared metrics.
func TestDashboard(t *testing.T) {
	raw, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	names := declared(t)
	used := map[string]bool{}
	queries := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			queries++
			for _, m := range metricName.FindAllString(q.Expr, -1) {
				base := m
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(m, suffix); ok && names[b] {
						base = b
					}
				}
				if !names[base] {
					t.Errorf("panel %q reads %s, which no component declares", p.Title, m)
				}
				used[base] = true
			}
		}
	}
	if d.UID == "" || queries < 10 {
		t.Errorf("dashboard %q (uid %q) has %d queries", d.Title, d.UID, queries)
	}
	for _, want := range []string{"caldera_scheduler_pending_jobs", "caldera_global_held_bindings", "volcano_e2e_scheduling_latency_milliseconds", "volcano_queue_share"} {
		if !used[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
}
