package inventory

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkMemberPools: a member of 1,000 nodes of four models and 20,000
// bound pods; each iteration sees one pod change and lists the pools, as
// planning a HyperJob after a change does.
func BenchmarkMemberPools(b *testing.B) {
	m := newMember("member cluster bench", DefaultPoolLabels, func() {})
	m.synced = true
	trim := slim(m.poolLabels)
	models := []string{"H100", "A100", "L40S", ""}
	for i := range 1000 {
		n, _ := trim(node(fmt.Sprintf("n-%d", i), models[i%4], "8", true))
		m.observe(n, false)
	}
	for i := range 20000 {
		p, _ := trim(pod(fmt.Sprintf("p-%d", i), fmt.Sprintf("n-%d", i%1000), "0", corev1.PodRunning))
		m.observe(p, false)
	}
	changing, _ := trim(pod("p-0", "n-1", "1", corev1.PodRunning))
	b.ReportAllocs()
	for b.Loop() {
		m.observe(changing, false)
		if ps, ok := m.nodePools(); !ok || len(ps) != 4 {
			b.Fatalf("pools %v %v", ps, ok)
		}
	}
}
