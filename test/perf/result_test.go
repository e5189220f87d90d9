package perf

import (
	"bytes"
	"strings"
	"testing"
)

// TestPrintTableShareOfCeiling: with the no-op binder in the run, each
// row shows its rate as a share of the binder's on the same workload and
// size; without it, none.
func TestPrintTableShareOfCeiling(t *testing.T) {
	results := []Result{
		{Workload: "w", Size: "small", Scheduler: NoopBinder, PodsPerSecond: 800},
		{Workload: "w", Size: "small", Scheduler: Caldera, PodsPerSecond: 400},
		{Workload: "w", Size: "large", Scheduler: Caldera, PodsPerSecond: 300},
	}
	var out bytes.Buffer
	if err := PrintTable(&out, results); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "of ceiling") {
		t.Fatalf("table:\n%s", out.String())
	}
	for i, want := range []string{"100%", "50%", "-"} {
		fields := strings.Fields(lines[i+1])
		if len(fields) < 8 || fields[7] != want {
			t.Errorf("row %d: %q, want %s of the ceiling", i+1, lines[i+1], want)
		}
	}
}
