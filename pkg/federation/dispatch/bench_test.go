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

// BenchmarkDecideSteady decides on one new job beside 10,000 released,
// placed ones in 10 queues over 100 clusters with room: the round a new
// binding triggers in a busy federation.
func BenchmarkDecideSteady(b *testing.B) {
	s := &Snapshot{Now: t0}
	for i := range 100 {
		s.Clusters = append(s.Clusters, cluster(fmt.Sprintf("member-%03d", i), 10000))
	}
	for i := range 10 {
		q := Queue{Name: fmt.Sprintf("team-%d", i), Weight: 1}
		s.Queues = append(s.Queues, q)
		for j, bd := range jobs(q.Name, 1000, 2, 1, time.Duration(i)*time.Millisecond) {
			bd.Released, bd.Cluster = true, s.Clusters[j%100].Name
			s.Bindings = append(s.Bindings, bd)
		}
	}
	s.Bindings = append(s.Bindings, jobs("team-0", 1, 2, 1, time.Hour)[0])
	s.Bindings[len(s.Bindings)-1].ID = "team-0/new"
	b.ReportAllocs()
	var d Decision
	for b.Loop() {
		d = Decide(s, Options{StarvationWait: time.Minute})
	}
	if len(d.Releases) != 1 {
		b.Fatalf("released %d, want the new job", len(d.Releases))
	}
}
