package tasktopology

import (
	"fmt"
	"testing"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// BenchmarkScoreNodes scores a worker of a 256-pod job (32 parameter
// servers kept apart, 224 workers beside them), half of it placed, over
// 5,000 nodes.
func BenchmarkScoreNodes(b *testing.B) {
	c := newCluster(5000, "cpu", "64")
	c.job("tf", tfAnnotations, []string{"ps=32", "worker=224"}, "cpu", "1")
	for i, p := range c.objs.Pods {
		if i%2 == 0 {
			p.Spec.NodeName = fmt.Sprintf("n%d", i/8)
		}
	}
	snap := api.Build(c.objs)
	jt := topologyOf(snap.Jobs["ns/tf"])
	pl := &Plugin{weight: 1, jobs: map[api.JobID]*jobTopology{"ns/tf": jt}}
	var task *api.TaskInfo
	for _, t := range snap.Jobs["ns/tf"].Tasks {
		if t.Status == api.Pending && t.Role == "worker" {
			task = t
			break
		}
	}
	scores := make([]float64, len(snap.NodeList))
	b.ReportAllocs()
	for b.Loop() {
		pl.ScoreNodes(task, snap.NodeList, scores)
	}
}

// BenchmarkAllocate places that job whole, on 1,000 nodes, in one cycle
// with priority, gang and task-topology.
func BenchmarkAllocate(b *testing.B) {
	c := newCluster(1000, "cpu", "16")
	c.job("tf", tfAnnotations, []string{"ps=32", "worker=224"}, "cpu", "1")
	plugins := func() []framework.TierPlugin {
		var out []framework.TierPlugin
		for _, f := range []framework.PluginFactory{newPriority, newGang, New} {
			p, err := f(nil, &framework.Handle{})
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, framework.TierPlugin{Plugin: p})
		}
		return out
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		snap := api.Build(c.objs)
		r := &recorder{binds: map[string]string{}}
		ssn := framework.OpenSession(b.Context(), snap, []framework.Tier{{Plugins: plugins()}}, framework.Options{Sink: r})
		b.StartTimer()
		runCycle(ssn)
		ssn.Close()
		if len(r.binds) != 256 {
			b.Fatalf("bound %d pods, want 256", len(r.binds))
		}
	}
}
