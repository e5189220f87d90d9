package usage

import (
	"fmt"
	"testing"
	"time"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework/frameworktest"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// BenchmarkUsage measures the plugin's share of a cycle at 5,000 nodes
// with 20 running pods each, every node measured: estimating every node
// at the session's start (once per cycle; cold: every node changed since
// the last cycle), and filtering and scoring all nodes for one task (once
// per task placed).
func BenchmarkUsage(b *testing.B) {
	const nodes, perNode = 5000, 20
	objs := api.Objects{}
	for i := range nodes {
		name := fmt.Sprintf("n%04d", i)
		objs.Nodes = append(objs.Nodes, st.MakeNode(name).Alloc("cpu", "64", "memory", "256Gi", "pods", "110").Obj())
		objs.NodeUsages = append(objs.NodeUsages, usageOf(name, fmt.Sprintf("%d", 10+i%40), "64Gi", time.Minute))
		for j := range perNode {
			objs.Pods = append(objs.Pods, started(fmt.Sprintf("p%04d-%02d", i, j), name, "1", "4Gi", now.Add(-time.Duration(j)*time.Minute)))
		}
	}
	objs.Pods = append(objs.Pods, st.MakePod("ns", "new-pod").Req("cpu", "2", "memory", "8Gi").Obj())
	snap := api.Build(objs)
	args := &configv1alpha1.UsageArgs{}
	args.Default()
	pl, err := New(args, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := pl.(*Plugin)
	tier := framework.Tier{Plugins: []framework.TierPlugin{{Plugin: p}}}
	ssn, _ := frameworktest.Open(b, snap, []framework.Tier{tier}, framework.Options{Now: now})
	task := pending(ssn)
	list := ssn.Snapshot.NodeList
	scores := make([]float64, len(list))

	b.Run("session-open-cold", func(b *testing.B) {
		for b.Loop() {
			p.bases = nil
			p.OnSessionOpen(ssn)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes*perNode), "ns/pod")
	})
	b.Run("session-open", func(b *testing.B) {
		for b.Loop() {
			p.OnSessionOpen(ssn)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes*perNode), "ns/pod")
	})
	b.Run("filter-and-score", func(b *testing.B) {
		p.OnSessionOpen(ssn)
		for b.Loop() {
			for _, n := range list {
				_ = p.Predicate(task, n)
			}
			p.ScoreNodes(task, list, scores)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
	})
}
