package perf

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"
)

// Result is what one scheduler did with one workload at one size. Times are
// in seconds. See docs/performance.md for what each number means.
type Result struct {
	Workload     string       `json:"workload"`
	Size         string       `json:"size"`
	Mode         Mode         `json:"mode"`
	Scheduler    string       `json:"scheduler"`
	Nodes        int          `json:"nodes"`
	Jobs         int          `json:"jobs"`
	Pods         int          `json:"pods"`
	ClientLimits ClientLimits `json:"clientLimits"`

	// PodsBound and JobsBound count the workload's pods seen bound, and its
	// jobs whose every pod was seen bound (probes not included).
	PodsBound int `json:"podsBound"`
	JobsBound int `json:"jobsBound"`
	// PodsPerSecond is (PodsBound-1) over the time from the first bind to
	// the last.
	PodsPerSecond float64 `json:"podsPerSecond"`
	// ServerPodsPerSecond is the same rate on the API server's side: the
	// workload pods' successful bindings by the scheduler, from the first to
	// the last, by the audit log's completion times. Unlike PodsPerSecond it
	// leaves out how late the watch delivers the binds.
	ServerPodsPerSecond float64 `json:"serverPodsPerSecond"`
	// FirstBindSeconds and LastBindSeconds are from the scheduler's start
	// (its process being launched) to the first and the last bind.
	FirstBindSeconds float64 `json:"firstBindSeconds"`
	LastBindSeconds  float64 `json:"lastBindSeconds"`
	// JobLatency is, over the jobs bound, the time from the job's creation
	// (its PodGroup's, or its pod's) — or from the scheduler's start when the
	// job existed before — to the bind of its last pod.
	JobLatency Percentiles `json:"jobLatencySeconds"`
	// Groups are the same figures for each job group, when the workload has
	// more than one.
	Groups []GroupResult `json:"groups,omitempty"`
	// ProbeLatencies are the probe pods' creation-to-bind latencies, in
	// order; ProbeLatency summarises them.
	ProbeLatencies []float64    `json:"probeLatenciesSeconds,omitempty"`
	ProbeLatency   *Percentiles `json:"probeLatencySeconds,omitempty"`

	// StatusSettledSeconds is, for a scheduler that keeps PodGroup status,
	// from its start to when every bound gang's PodGroup showed Running with
	// its pods running: the scheduler is stopped only then, so that the
	// status writes it holds to coalesce are counted.
	StatusSettledSeconds float64 `json:"statusSettledSeconds,omitempty"`
	// PodStartLag is, over the pods seen Running by then, the time from a
	// pod's bind to its start (kwok's): a scheduler that writes a gang's
	// Running once its pods start waits this long.
	PodStartLag *Percentiles `json:"podStartLagSeconds,omitempty"`

	// Writes are the scheduler's write requests to the API server, from the
	// audit log, from its start to its stop.
	Writes WriteCounts `json:"writes"`
	// WritesPerPod is Writes.Total per pod bound (probes included).
	WritesPerPod float64 `json:"writesPerPod"`

	// SchedulerCPUSeconds is the scheduler process's user and system CPU
	// time from its start to the end of the binds (and probes);
	// SchedulerPeakRSSBytes its resident memory's high-water mark (VmHWM)
	// over the whole run.
	SchedulerCPUSeconds   float64 `json:"schedulerCPUSeconds"`
	SchedulerPeakRSSBytes int64   `json:"schedulerPeakRSSBytes"`
	// APIServerCPUSeconds is kube-apiserver's CPU time over the same span:
	// the scheduler's requests, kwok's pod status updates and the
	// benchmark's watch.
	APIServerCPUSeconds float64 `json:"apiServerCPUSeconds"`

	// CPUProfiles are the files of caldera-scheduler's CPU profile, one per
	// chunk; `go tool pprof` merges them.
	CPUProfiles []string `json:"cpuProfiles,omitempty"`
	// APIServerProfiles are the files of the API server's CPU profile over
	// the run, one per chunk.
	APIServerProfiles []string `json:"apiServerProfiles,omitempty"`
	// Problems are correctness failures: pods left pending, pods bound
	// twice, nodes over capacity, gangs bound in part.
	Problems []string `json:"problems,omitempty"`
}

// GroupResult is what became of one job group's jobs.
type GroupResult struct {
	Name      string `json:"name"`
	PodsBound int    `json:"podsBound"`
	// PodsPerSecond is (PodsBound-1) over the time from the group's first
	// bind to its last.
	PodsPerSecond float64 `json:"podsPerSecond"`
	// JobLatency is JobLatency over the group's jobs.
	JobLatency Percentiles `json:"jobLatencySeconds"`
}

// Percentiles summarise latencies in seconds (nearest-rank percentiles).
type Percentiles struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

func percentiles(samples []float64) Percentiles {
	if len(samples) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(i, 0)]
	}
	return Percentiles{Count: len(s), P50: rank(0.50), P99: rank(0.99), Max: s[len(s)-1]}
}

// Report is the JSON written per workload and size.
type Report struct {
	Workload  string    `json:"workload"`
	Size      string    `json:"size"`
	StartedAt time.Time `json:"startedAt"`
	GoVersion string    `json:"goVersion"`
	CPUs      int       `json:"cpus"`
	// Definition is the workload as run.
	Definition *Workload `json:"definition"`
	Results    []Result  `json:"results"`
}

// WriteReport writes the results as <dir>/<workload>-<size>.json.
func WriteReport(dir string, w *Workload, started time.Time, results []Result) (string, error) {
	if len(results) == 0 {
		return "", nil
	}
	r := Report{
		Workload: results[0].Workload, Size: results[0].Size, StartedAt: started.UTC(),
		GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), Definition: w, Results: results,
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.json", r.Workload, r.Size))
	return path, os.WriteFile(path, append(b, '\n'), 0o644)
}

// PrintTable prints one line per result.
func PrintTable(out io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	// With the no-op binder in the run, every rate is also a share of its
	// rate on the same workload and size: the ceiling of this machine.
	ceiling := map[string]float64{}
	for _, r := range results {
		if r.Scheduler == NoopBinder {
			ceiling[r.Workload+"/"+r.Size] = r.PodsPerSecond
		}
	}
	fmt.Fprintln(tw, "workload\tsize\tscheduler\tnodes\tpods\tbound\tpods/s\tof ceiling\tserver pods/s\tfirst bind s\tlast bind s\tjob p50 s\tjob p99 s\tprobe p50 s\tprobe max s\twrites/pod\tCPU s\tpeak RSS MiB\tapiserver CPU s\t")
	for _, r := range results {
		jobP50, jobP99, probeP50, probeMax := "-", "-", "-", "-"
		if r.JobLatency.Count > 0 {
			jobP50, jobP99 = fmt.Sprintf("%.2f", r.JobLatency.P50), fmt.Sprintf("%.2f", r.JobLatency.P99)
		}
		if r.ProbeLatency != nil && r.ProbeLatency.Count > 0 {
			probeP50, probeMax = fmt.Sprintf("%.3f", r.ProbeLatency.P50), fmt.Sprintf("%.3f", r.ProbeLatency.Max)
		}
		share := "-"
		if c := ceiling[r.Workload+"/"+r.Size]; c > 0 {
			share = fmt.Sprintf("%.0f%%", 100*r.PodsPerSecond/c)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%.0f\t%s\t%.0f\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%.2f\t%.1f\t%.0f\t%.1f\t\n",
			r.Workload, r.Size, r.Scheduler, r.Nodes, r.Pods, r.PodsBound, r.PodsPerSecond, share, r.ServerPodsPerSecond,
			r.FirstBindSeconds, r.LastBindSeconds, jobP50, jobP99, probeP50, probeMax,
			r.WritesPerPod, r.SchedulerCPUSeconds, float64(r.SchedulerPeakRSSBytes)/(1<<20), r.APIServerCPUSeconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		for _, g := range r.Groups {
			share := ""
			for _, c := range results {
				if c.Scheduler == NoopBinder && c.Workload == r.Workload && c.Size == r.Size {
					for _, cg := range c.Groups {
						if cg.Name == g.Name && cg.PodsPerSecond > 0 {
							share = fmt.Sprintf(" (%.0f%% of the no-op binder's)", 100*g.PodsPerSecond/cg.PodsPerSecond)
						}
					}
				}
			}
			fmt.Fprintf(out, "GROUP %s/%s/%s %s: %d pods bound, %.0f pods/s%s, job latency p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
				r.Workload, r.Size, r.Scheduler, g.Name, g.PodsBound, g.PodsPerSecond, share,
				1000*g.JobLatency.P50, 1000*g.JobLatency.P99, 1000*g.JobLatency.Max)
		}
	}
	for _, r := range results {
		for _, p := range r.Problems {
			fmt.Fprintf(out, "PROBLEM %s/%s/%s: %s\n", r.Workload, r.Size, r.Scheduler, p)
		}
	}
	return nil
}
