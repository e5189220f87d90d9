package usage

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func reading(s, span int, cpu, mem int64, pods ...Pod) Reading {
	return Reading{At: at(s), Span: time.Duration(span) * time.Second, Node: Amounts{CPU: cpu, Memory: mem}, Pods: pods}
}

func pod(name string, cpu, mem int64) Pod {
	return Pod{UID: types.UID("uid-" + name), Namespace: "ns", Name: name, Use: Amounts{CPU: cpu, Memory: mem}}
}

func TestWindowReport(t *testing.T) {
	for _, tc := range []struct {
		name     string
		length   time.Duration
		readings []Reading
		want     Report
		wantOK   bool
	}{
		{name: "no reading", length: time.Minute},
		{
			name: "readings weigh by their spans", length: time.Minute,
			readings: []Reading{reading(10, 10, 1000, 100), reading(40, 30, 2000, 200)},
			// (10·1000 + 30·2000) / 40, (10·100 + 30·200) / 40
			want:   Report{At: at(40), Window: 40 * time.Second, Node: Amounts{CPU: 1750, Memory: 175}, Pods: []Pod{}},
			wantOK: true,
		},
		{
			name: "readings that ended before the window are forgotten, one across its start counts in part", length: 30 * time.Second,
			readings: []Reading{reading(10, 10, 9000, 900), reading(30, 20, 1000, 100), reading(50, 20, 3000, 300)},
			// window (20s, 50s]: 10s of the second reading, 20s of the third.
			want:   Report{At: at(50), Window: 30 * time.Second, Node: Amounts{CPU: 2333, Memory: 233}, Pods: []Pod{}},
			wantOK: true,
		},
		{
			name: "a pod averages over the readings it is in; pods gone are not reported", length: time.Minute,
			readings: []Reading{
				reading(10, 10, 1000, 100, pod("gone", 500, 50), pod("b", 100, 10)),
				reading(20, 10, 1000, 100, pod("b", 300, 30), pod("a", 400, 40)),
			},
			want: Report{At: at(20), Window: 20 * time.Second, Node: Amounts{CPU: 1000, Memory: 100},
				Pods: []Pod{pod("a", 400, 40), pod("b", 200, 20)}},
			wantOK: true,
		},
		{
			name: "a reading not after the last, or without a span, is ignored", length: time.Minute,
			readings: []Reading{reading(20, 10, 1000, 100), reading(20, 10, 9000, 900), reading(15, 5, 9000, 900), reading(30, 0, 9000, 900)},
			want:     Report{At: at(20), Window: 10 * time.Second, Node: Amounts{CPU: 1000, Memory: 100}, Pods: []Pod{}},
			wantOK:   true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := Window{Length: tc.length}
			for _, r := range tc.readings {
				w.Add(r)
			}
			got, ok := w.Report()
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if ok && w.Covered() != got.Window {
				t.Errorf("Covered() = %v, report's window %v", w.Covered(), got.Window)
			}
		})
	}
}

// TestWindowKeepsItsLength: readings every 10s for ten minutes keep a
// five-minute window whatever the count.
func TestWindowKeepsItsLength(t *testing.T) {
	w := Window{Length: 5 * time.Minute}
	for s := 10; s <= 600; s += 10 {
		w.Add(reading(s, 10, int64(s), 0))
	}
	rep, _ := w.Report()
	if rep.Window != 5*time.Minute {
		t.Errorf("window = %v, want 5m", rep.Window)
	}
	// The mean of 310..600 by 10.
	if rep.Node.CPU != 455 {
		t.Errorf("cpu = %d, want 455", rep.Node.CPU)
	}
	if len(w.readings) != 30 {
		t.Errorf("kept %d readings, want 30", len(w.readings))
	}
}
