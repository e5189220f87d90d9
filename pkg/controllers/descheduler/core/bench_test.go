package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/caldera-sh/caldera/pkg/loadaware"
)

// BenchmarkDecide measures one run at 5,000 nodes of 20 pods each, one
// node in twenty hot, with the default caps (10 per run, 2 per node)
// and with no cap that binds (every hot node relieved).
func BenchmarkDecide(b *testing.B) {
	const nodes, perNode = 5000, 20
	in := Input{Now: now, Config: cfg}
	for i := range nodes {
		use := 3000 + int64(i%13)*100
		if i%20 == 0 {
			use = 9000
		}
		n := Node{Name: fmt.Sprintf("n%04d", i), Allocatable: Amounts{10000, 100e9},
			Usage: &loadaware.Usage{At: now.Add(-time.Minute), Window: 5 * time.Minute, CPU: use, Memory: 20e9}}
		for j := range perNode {
			q := p(fmt.Sprintf("p%04d-%02d", i, j), int32(j%3), float64(use)/1000/perNode)
			n.Requested = n.Requested.Plus(q.Request)
			n.Pods = append(n.Pods, q)
		}
		in.Nodes = append(in.Nodes, n)
	}
	for _, tc := range []struct {
		name     string
		run, per int
	}{{"default-caps", 10, 2}, {"uncapped", 1 << 20, 1 << 20}} {
		b.Run(tc.name, func(b *testing.B) {
			in.Config.MaxPerRun, in.Config.MaxPerNode = tc.run, tc.per
			var evicted int
			for b.Loop() {
				evicted = len(Decide(in).Evictions)
			}
			b.ReportMetric(float64(evicted), "evictions")
		})
	}
}
