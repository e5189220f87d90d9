package scenario

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Summary is a run's figures.
type Summary struct {
	Name                     string
	Jobs, Started, Finished  int
	Simulated, Wall          time.Duration
	Cycles, Binds, Evictions int
	Queues                   []QueueSummary
	// Utilization is each resource's allocation over the run, time-weighted,
	// as a share of the cluster's capacity; ModelUtilization the same for
	// each GPU model's milli-GPUs.
	Utilization      map[string]float64
	ModelUtilization map[string]float64
	// PeakGPUAllocation is the highest share of GPU capacity allocated at
	// once.
	PeakGPUAllocation float64
	// Fairness is Jain's index over the queues' mean dominant shares: 1 when
	// every queue with work got the same share.
	Fairness float64
	// Fragmentation is the share of GPU capacity free but on nodes that
	// cannot hold the workload's median GPU pod, averaged over the run;
	// FragmentationAtEnd the same at its end.
	Fragmentation, FragmentationAtEnd float64
	// CardPlacements counts placements on GPU cards; CardOvercommits
	// those that took more of a card than was free (none, unless the
	// scheduler erred).
	CardPlacements, CardOvercommits int
	// CardMemoryHeld is the share of the virtual-GPU cards' memory held
	// at the end (on MIG cards, whole instances).
	CardMemoryHeld float64
	// RollBacks counts HyperJob plans rolled back after the start timeout.
	RollBacks int
	// Load is the spread of the nodes' real CPU use, with loadAware.
	Load *LoadSummary
}

// QueueSummary is one queue's figures, in seconds.
type QueueSummary struct {
	Name                    string
	Jobs, Started, Finished int
	// Wait is from submission to the gang placed; Completion from
	// submission to every pod done.
	WaitP50, WaitP90, WaitP99    float64
	CompletionP50, CompletionP99 float64
	// GangWaitP50/P99 are the waits of the jobs of more than one pod.
	GangWaitP50, GangWaitP99 float64
	Evictions                int
}

// Summarize sums a run up.
func Summarize(r *Result) Summary {
	s := Summary{Name: r.Name, Simulated: r.End, Wall: r.Wall, Cycles: r.Stats.Cycles, Binds: r.Stats.Binds, Evictions: r.Stats.Evictions,
		Utilization: map[string]float64{}, ModelUtilization: map[string]float64{}, CardPlacements: r.CardPlacements, CardOvercommits: r.CardOvercommits, CardMemoryHeld: r.CardMemoryHeld, RollBacks: r.RollBacks, Load: r.Load}
	byQueue := map[string][]JobRecord{}
	for _, j := range r.Jobs {
		byQueue[j.Queue] = append(byQueue[j.Queue], j)
		s.Jobs++
		if j.Start >= 0 {
			s.Started++
		}
		if j.End >= 0 {
			s.Finished++
		}
	}
	var shares []float64
	for _, q := range sortedKeys(byQueue) {
		jobs := byQueue[q]
		qs := QueueSummary{Name: q, Jobs: len(jobs)}
		var wait, jct, gang []float64
		var dominant float64
		for _, j := range jobs {
			qs.Evictions += j.Evictions
			if j.Start < 0 {
				continue
			}
			qs.Started++
			w := (j.Start - j.Submit).Seconds()
			wait = append(wait, w)
			if j.Tasks > 1 {
				gang = append(gang, w)
			}
			if j.End >= 0 {
				qs.Finished++
				jct = append(jct, (j.End - j.Submit).Seconds())
				// The job's dominant share of the cluster, times how long
				// it held it.
				var d float64
				for name, q := range j.Requests {
					if c := r.Capacity[string(name)]; c > 0 {
						d = max(d, float64(q.MilliValue())/1000*float64(j.Tasks)/c)
					}
				}
				dominant += d * (j.End - j.Start).Seconds()
			}
		}
		qs.WaitP50, qs.WaitP90, qs.WaitP99 = percentile(wait, 50), percentile(wait, 90), percentile(wait, 99)
		qs.CompletionP50, qs.CompletionP99 = percentile(jct, 50), percentile(jct, 99)
		qs.GangWaitP50, qs.GangWaitP99 = percentile(gang, 50), percentile(gang, 99)
		s.Queues = append(s.Queues, qs)
		if r.End > 0 && qs.Jobs > 0 {
			shares = append(shares, dominant/r.End.Seconds())
		}
	}
	s.Fairness = jain(shares)
	if secs := r.End.Seconds(); secs > 0 {
		for name, area := range r.AllocatedSeconds {
			if c := r.Capacity[name]; c > 0 {
				s.Utilization[name] = area / secs / c
			}
		}
		for m, area := range r.ModelAllocatedSeconds {
			if c := r.ModelCapacity[m]; c > 0 {
				s.ModelUtilization[m] = area / secs / c
			}
		}
	}
	gpu := r.Capacity[r.GPU]
	for _, sample := range r.Usage {
		if gpu > 0 {
			s.PeakGPUAllocation = max(s.PeakGPUAllocation, sample.Allocated[r.GPU]/gpu)
		}
	}
	if gpu > 0 {
		if secs := r.End.Seconds(); secs > 0 {
			s.Fragmentation = r.StrandedGPUSeconds / secs / gpu
		}
		s.FragmentationAtEnd = r.StrandedGPUAtEnd / gpu
	}
	return s
}

// percentile is the p-th percentile of v (nearest rank); 0 for none.
func percentile(v []float64, p int) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	i := (len(v)*p + 99) / 100
	return v[max(i-1, 0)]
}

// jain is Jain's fairness index of x: (Σx)² / (n·Σx²).
func jain(x []float64) float64 {
	var sum, sq float64
	for _, v := range x {
		sum += v
		sq += v * v
	}
	if sq == 0 {
		return 1
	}
	return sum * sum / (float64(len(x)) * sq)
}

// WriteJobs writes a record per job as CSV: times in seconds from the
// run's start, -1 for what did not happen.
func WriteJobs(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"name", "queue", "cluster", "tasks", "min_available", "requests", "submit_s", "released_s", "start_s", "end_s", "wait_s", "evictions", "rolled_back"}); err != nil {
		return err
	}
	secs := func(d time.Duration) string {
		if d < 0 {
			return "-1"
		}
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	}
	for _, j := range r.Jobs {
		wait := time.Duration(-1)
		if j.Start >= 0 {
			wait = j.Start - j.Submit
		}
		var req []string
		for _, name := range slices.Sorted(maps.Keys(j.Requests)) {
			q := j.Requests[name]
			req = append(req, string(name)+"="+q.String())
		}
		if err := cw.Write([]string{j.Name, j.Queue, j.Cluster, strconv.Itoa(int(j.Tasks)), strconv.Itoa(int(j.MinAvailable)), strings.Join(req, ";"),
			secs(j.Submit), secs(j.Released), secs(j.Start), secs(j.End), secs(wait), strconv.Itoa(j.Evictions), strconv.FormatBool(j.RolledBack)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteText writes the summary for a terminal.
func WriteText(w io.Writer, s Summary) {
	fmt.Fprintf(w, "%s: %d jobs, %d started, %d finished in %s simulated (%s wall); %d cycles, %d binds, %d evictions\n",
		s.Name, s.Jobs, s.Started, s.Finished, s.Simulated.Round(time.Second), s.Wall.Round(time.Millisecond), s.Cycles, s.Binds, s.Evictions)
	for _, name := range sortedKeys(s.Utilization) {
		fmt.Fprintf(w, "  utilization %-22s %6.1f%%\n", name, 100*s.Utilization[name])
	}
	for _, m := range sortedKeys(s.ModelUtilization) {
		fmt.Fprintf(w, "  utilization GPU model %-12s %6.1f%%\n", m, 100*s.ModelUtilization[m])
	}
	if s.PeakGPUAllocation > 0 {
		fmt.Fprintf(w, "  peak GPU allocation             %6.1f%%\n", 100*s.PeakGPUAllocation)
	}
	if s.Fragmentation > 0 || s.FragmentationAtEnd > 0 {
		fmt.Fprintf(w, "  GPU fragmentation (free, unusable by the median GPU pod) %.1f%% on average, %.1f%% at the end\n", 100*s.Fragmentation, 100*s.FragmentationAtEnd)
	}
	if s.RollBacks > 0 {
		fmt.Fprintf(w, "  HyperJob plans rolled back (children not started in time): %d\n", s.RollBacks)
	}
	if s.CardPlacements > 0 {
		fmt.Fprintf(w, "  GPU cards: %d placements, %d over a card's memory\n", s.CardPlacements, s.CardOvercommits)
		if s.CardMemoryHeld > 0 {
			fmt.Fprintf(w, "  GPU cards' memory held at the end %.1f%%\n", 100*s.CardMemoryHeld)
		}
	}
	if l := s.Load; l != nil {
		fmt.Fprintf(w, "  node CPU in use: mean %.1f%%, spread (std dev across nodes) %.1f points, above %.0f%%: %.1f%% of node-time, peak %.1f%%; descheduler evictions %d\n",
			l.Mean, l.Spread, l.HighWatermark, 100*l.Hot, l.Peak, l.Evictions)
	}
	fmt.Fprintf(w, "  fairness (Jain, dominant shares) %.3f\n", s.Fairness)
	fmt.Fprintln(w, "  queue          jobs  started  finished  wait p50/p90/p99 (s)        completion p50/p99 (s)  evictions")
	for _, q := range s.Queues {
		fmt.Fprintf(w, "  %-13s %5d %8d %9d  %8.0f %8.0f %8.0f  %10.0f %10.0f  %9d\n",
			q.Name, q.Jobs, q.Started, q.Finished, q.WaitP50, q.WaitP90, q.WaitP99, q.CompletionP50, q.CompletionP99, q.Evictions)
	}
}
