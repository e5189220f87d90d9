package oversub

import (
	"testing"

	"github.com/caldera-sh/caldera/pkg/agent/config"
)

const gi = int64(1) << 30

// lend is 0.6 of v, as Compute rounds it.
func lend(v int64) int64 { r := 0.6; return int64(r * float64(v)) }

func TestCompute(t *testing.T) {
	cfg, _ := (*config.Configuration)(nil).ForNode(nil) // ratio 0.6, margin 0.05
	cpuOnly := cfg
	cpuOnly.OverMemory = false
	off := cfg
	off.OverSubscription = false
	// 16 CPUs and 64Gi; online pods requested 12 CPUs and 40Gi and use 4
	// CPUs and 24Gi; offline pods use 2 CPUs and 4Gi; the system 1 CPU
	// and 2Gi.
	s := Sample{
		Allocatable:   Amounts{CPU: 16000, Memory: 64 * gi},
		OnlineRequest: Amounts{CPU: 12000, Memory: 40 * gi},
		OnlineUsage:   Amounts{CPU: 4000, Memory: 24 * gi},
		NodeUsage:     Amounts{CPU: 7000, Memory: 30 * gi},
		OfflineUsage:  Amounts{CPU: 2000, Memory: 4 * gi},
	}
	busy := s
	// Online usage near the requests: room is what limits.
	busy.OnlineUsage = Amounts{CPU: 11000, Memory: 38 * gi}
	busy.NodeUsage = Amounts{CPU: 15500, Memory: 60 * gi}
	for name, tc := range map[string]struct {
		s    Sample
		cfg  config.Node
		want Amounts
	}{
		// unused 8000m and 16Gi; room 16000-5000-800 = 10200m and
		// 64-26-3.2 = 34.8Gi; 0.6 of the unused.
		"unused requests, room enough": {s: s, cfg: cfg, want: Amounts{CPU: 4800, Memory: lend(16 * gi)}},
		"cpu only":                     {s: s, cfg: cpuOnly, want: Amounts{CPU: 4800}},
		"switched off":                 {s: s, cfg: off},
		// unused 1000m; room 16000-13500-800 = 1700m: 600m. Memory:
		// unused 2Gi, room 64-56-3.2 = 4.8Gi: 1.2Gi.
		"busy online pods": {s: busy, cfg: cfg, want: Amounts{CPU: 600, Memory: lend(2 * gi)}},
		// Usage above the requests lends nothing.
		"online pods above their requests": {s: Sample{
			Allocatable: Amounts{CPU: 8000, Memory: 8 * gi}, OnlineRequest: Amounts{CPU: 1000, Memory: gi},
			OnlineUsage: Amounts{CPU: 3000, Memory: 2 * gi}, NodeUsage: Amounts{CPU: 3000, Memory: 2 * gi},
		}, cfg: cfg},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Compute(tc.s, tc.cfg); got != tc.want {
				t.Errorf("Compute = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestWorth(t *testing.T) {
	for name, tc := range map[string]struct {
		cur, next Amounts
		want      bool
	}{
		"same":               {Amounts{1000, gi}, Amounts{1000, gi}, false},
		"within a tenth":     {Amounts{1000, gi}, Amounts{1090, gi}, false},
		"more than a tenth":  {Amounts{1000, gi}, Amounts{1200, gi}, true},
		"appears":            {Amounts{}, Amounts{1, 0}, true},
		"goes":               {Amounts{1000, gi}, Amounts{1000, 0}, true},
		"nothing to nothing": {Amounts{}, Amounts{}, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Worth(tc.cur, tc.next); got != tc.want {
				t.Errorf("Worth = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSmoother(t *testing.T) {
	s := Smoother{Alpha: 0.5}
	var got []float64
	for _, x := range []float64{10, 20, 10, 10, 30, 0} {
		got = append(got, s.Add(x))
	}
	want := []float64{10, 20, 15, 12.5, 30, 15}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("smoothed %v, want %v", got, want)
		}
	}
}
