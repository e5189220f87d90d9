package descheduler

import (
	"testing"
	"time"
)

func TestLoadConfig(t *testing.T) {
	c, err := LoadConfig([]byte("highWatermark: {cpu: 70}\nnamespaces: {include: [batch]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Policy()
	if p.High.CPU != 70 || p.High.Memory != 80 || p.Low.CPU != 60 || p.MaxPerRun != 10 || p.MaxPerNode != 2 || p.StaleAfter != 5*time.Minute || c.Interval.Duration != 2*time.Minute {
		t.Errorf("defaults not applied: %+v, interval %v", p, c.Interval.Duration)
	}
	if !c.movesFrom("batch") || c.movesFrom("web") || c.movesFrom("kube-system") {
		t.Errorf("namespaces: include batch only, exclude kube-system")
	}

	for _, tc := range []struct{ in, want string }{
		{"lowWatermark: {cpu: 90}", `lowWatermark.cpu: Invalid value: 90: must not be above highWatermark.cpu (80)`},
		{"highWatermark: {memory: 120}\nlowWatermark: {memory: 50}", `highWatermark.memory: Invalid value: 120: must be a percentage between 0 and 100`},
		{"interval: 0s\nmaxEvictionsPerNode: 0", `[interval: Invalid value: "0s": must be positive, maxEvictionsPerNode: Invalid value: 0: must be at least 1]`},
		{"maxEvictions: 3", `error unmarshaling JSON: while decoding JSON: json: unknown field "maxEvictions"`},
	} {
		_, err := LoadConfig([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}
