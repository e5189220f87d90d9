package sim

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSim runs the docs' examples: the gangs scenario with a jobs file,
// and the trace slice as JSON.
func TestSim(t *testing.T) {
	var out bytes.Buffer
	cmd := NewCommand(&out)
	jobs, report := filepath.Join(t.TempDir(), "jobs.csv"), filepath.Join(t.TempDir(), "report.html")
	cmd.SetArgs([]string{"../../sim/scenario/testdata/gangs.yaml", "--jobs", jobs, "--report", report})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "gangs: 120 jobs, 120 started, 120 finished in 4h18m30s simulated") {
		t.Errorf("output:\n%s", out.String())
	}
	raw, err := os.ReadFile(jobs)
	if err != nil || strings.Count(string(raw), "\n") != 121 {
		t.Errorf("jobs file: %d lines, %v", strings.Count(string(raw), "\n"), err)
	}
	html, err := os.ReadFile(report)
	if err != nil || strings.Count(string(html), "<svg") != 3 || !strings.Contains(string(html), "<polyline") || !strings.Contains(string(html), "gangs: 120 jobs") {
		t.Errorf("report: %d plots, %v", strings.Count(string(html), "<svg"), err)
	}
	out.Reset()
	cmd = NewCommand(&out)
	traced := filepath.Join(t.TempDir(), "trace.html")
	cmd.SetArgs([]string{"../../sim/scenario/testdata/alibaba-slice.yaml", "-o", "json", "--report", traced})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil || sum["Name"] != "alibaba-slice" {
		t.Errorf("JSON: %v %v", sum["Name"], err)
	}
	// The trace's GPU models get a bar each and a line each over time.
	html, err = os.ReadFile(traced)
	if err != nil || strings.Count(string(html), "<svg") != 5 || !strings.Contains(string(html), ">V100M32<") {
		t.Errorf("trace report: %d plots, %v", strings.Count(string(html), "<svg"), err)
	}
	cmd = NewCommand(&out)
	cmd.SetArgs([]string{"nowhere.yaml"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "nowhere.yaml") {
		t.Errorf("a missing scenario: %v", err)
	}
}
