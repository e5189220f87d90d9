package scenario

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkScenario runs single-pod jobs of 1, 2 and 4 GPUs, one a
// second, through 1,000 nodes of 8 GPUs with kube-scheduler's adaptive
// node sampling (42% of 1,000 nodes) and with 5% (at least 50 feasible
// nodes), and reports simulated jobs and events (binds and completions)
// per wall second, the heap the result keeps after the run and the memory
// taken from the system, with the garbage collector set as calderactl sim
// sets it. With 3,000 jobs that run 2 hours, the cluster fills to about
// 87% and no job ends before the last arrives; with 20,000 and 100,000
// jobs that run 45 minutes on average, about 2,700 run at a time (about
// 80% of the GPUs at the peak), over 12 and 35 simulated hours.
func BenchmarkScenario(b *testing.B) {
	for _, size := range []struct {
		jobs    int
		runtime time.Duration
	}{{3000, 2 * time.Hour}, {20000, 45 * time.Minute}, {100000, 45 * time.Minute}} {
		for _, c := range []struct {
			name, sampling string
		}{{"adaptive", ""}, {"find5pct", sampled}} {
			b.Run(fmt.Sprintf("jobs=%d/%s", size.jobs, c.name), func(b *testing.B) {
				benchScenario(b, size.jobs, size.runtime, c.sampling)
			})
		}
	}
}

func benchScenario(b *testing.B, jobs int, runFor time.Duration, sampling string) {
	// As calderactl sim runs.
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent))
	s := &Scenario{Name: "bench", Seed: 1, Scheduler: sampling,
		Cluster: &Cluster{NodeGroups: []NodeGroup{{Name: "gpu", Count: 1000, Resources: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("96"), corev1.ResourceMemory: resource.MustParse("1Ti"), "nvidia.com/gpu": resource.MustParse("8"),
		}}}},
	}
	for i, gpus := range []string{"1", "2", "4"} {
		s.Workload.Generators = append(s.Workload.Generators, Generator{
			Name: fmt.Sprintf("g%d", i), Count: jobs / 3, Interarrival: metav1.Duration{Duration: 3 * time.Second},
			Runtime:  metav1.Duration{Duration: runFor},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), "nvidia.com/gpu": resource.MustParse(gpus)},
		})
	}
	var r *Result
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if r, err = Run(b.Context(), s); err != nil {
			b.Fatal(err)
		}
	}
	secs := r.Wall.Seconds()
	b.ReportMetric(float64(len(r.Jobs))/secs, "jobs/s")
	b.ReportMetric(float64(r.Stats.Binds+r.Stats.Completions)/secs, "events/s")
	b.ReportMetric(float64(r.Stats.Cycles), "cycles")
	// What the run keeps (its result) and what it took from the system
	// at its peak.
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "live-MiB")
	b.ReportMetric(float64(m.Sys)/(1<<20), "sys-MiB")
	if sum := Summarize(r); sum.Finished != len(r.Jobs) {
		b.Fatalf("%d of %d finished", sum.Finished, len(r.Jobs))
	}
}

// sampled is the default tiers, looking for 5% of the nodes (at least 50).
const sampled = `apiVersion: scheduler.config.caldera.sh/v1alpha1
kind: SchedulerConfiguration
actions: [enqueue, allocate, backfill]
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
nodeSampling:
  percentageOfNodesToFind: 5
  minNodesToFind: 50
`
