package dispatch

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkDecide decides on 10,000 held jobs in 10 queues over 100
// clusters that can take about a third of them.
func BenchmarkDecide(b *testing.B) {
	s := &Snapshot{Now: t0}
	for i := range 100 {
		s.Clusters = append(s.Clusters, cluster(fmt.Sprintf("member-%03d", i), 256))
	}
	for i := range 10 {
		q := Queue{Name: fmt.Sprintf("team-%d", i), Weight: int32(1 + i%3)}
		s.Queues = append(s.Queues, q)
		s.Bindings = append(s.Bindings, jobs(q.Name, 1000, 4, 2, time.Duration(i)*time.Millisecond)...)
	}
	b.ReportAllocs()
	var d Decision
	for b.Loop() {
		d = Decide(s, Options{StarvationWait: time.Minute})
	}
	b.ReportMetric(float64(len(d.Releases)), "releases")
}
