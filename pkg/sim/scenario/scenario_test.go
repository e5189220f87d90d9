package scenario

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/caldera-sh/caldera/pkg/sim/trace"
)

func run(t *testing.T, path string) *Result {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAlibabaSlice: the trace slice replays: every task that fits a node
// starts, in arrival order when the cluster has room, GPU models are
// respected, and the run is the same twice. Its figures are pinned: the
// run is deterministic, and the tolerances leave room for a change of node
// choice or order, not for a scheduler that leaves tasks waiting, packs
// GPUs worse or strands them.
func TestAlibabaSlice(t *testing.T) {
	r := run(t, "testdata/alibaba-slice.yaml")
	s := Summarize(r)
	type counts struct {
		Jobs, Unscheduled, Started, Finished, Binds, Evictions, CardOvercommits int
	}
	// 24 of the 400 tasks fit no node of the slice; every other one runs
	// to its end, once, and nothing is evicted.
	want := counts{Jobs: 376, Unscheduled: 24, Started: 376, Finished: 376, Binds: 376}
	got := counts{s.Jobs, r.Unscheduled, s.Started, s.Finished, s.Binds, s.Evictions, s.CardOvercommits}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Fatalf("counts (-want,+got):\n%s", diff)
	}
	if len(s.Queues) != 1 {
		t.Fatalf("queues %+v, want only default", s.Queues)
	}
	q := s.Queues[0]
	for _, f := range []struct {
		name      string
		got, want float64
		// tolerance is relative to want, or absolute when want is 0.
		tolerance float64
	}{
		// The run ends when the trace's longest task does: a scheduler
		// that delays tasks ends it later.
		{"makespan (h)", s.Simulated.Hours(), 3482.64, 0.01},
		// Most tasks start on arrival; the waits of the others are the
		// scheduler's doing.
		{"wait p50 (s)", q.WaitP50, 0, 1},
		{"wait p90 (s)", q.WaitP90, 1462.95, 0.25},
		{"wait p99 (s)", q.WaitP99, 8328.44, 0.25},
		{"GPU utilization", s.Utilization[trace.GPUMilli], 0.0811, 0.05},
		{"peak GPU allocation", s.PeakGPUAllocation, 0.8956, 0.05},
		// GPUs free only where no median GPU task fits: next to none.
		{"fragmentation", s.Fragmentation, 0, 0.02},
		{"fragmentation at the end", s.FragmentationAtEnd, 0, 0},
	} {
		bound := f.tolerance
		if f.want != 0 {
			bound *= f.want
		}
		if math.Abs(f.got-f.want) > bound {
			t.Errorf("%s = %v, want %v within %v", f.name, f.got, f.want, bound)
		}
	}
	for _, j := range r.Jobs {
		if j.Start >= 0 && j.Start < j.Submit {
			t.Errorf("%s started at %s, before its submission at %s", j.Name, j.Start, j.Submit)
		}
		if j.End >= 0 && j.End < j.Start {
			t.Errorf("%s ended before it started", j.Name)
		}
	}
	again := run(t, "testdata/alibaba-slice.yaml")
	var a, b bytes.Buffer
	if err := WriteJobs(&a, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJobs(&b, again); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("two runs of the same scenario differ")
	}
	rows, err := csv.NewReader(&a).ReadAll()
	if err != nil || len(rows) != len(r.Jobs)+1 || rows[0][0] != "name" {
		t.Errorf("CSV: %d rows, %v", len(rows), err)
	}
}

// TestGangs: gangs start whole (their start is when the fourth pod is
// placed), both queues get work, and the weighted queue's share is the
// larger.
func TestGangs(t *testing.T) {
	r := run(t, "testdata/gangs.yaml")
	s := Summarize(r)
	if s.Jobs != 120 || s.Finished != 120 {
		t.Fatalf("%d jobs, %d finished", s.Jobs, s.Finished)
	}
	var train, eval QueueSummary
	for _, q := range s.Queues {
		switch q.Name {
		case "train":
			train = q
		case "eval":
			eval = q
		}
	}
	if train.Jobs != 40 || eval.Jobs != 80 || train.GangWaitP99 < train.WaitP50 {
		t.Errorf("queues %+v %+v", train, eval)
	}
	if s.Fragmentation < 0 || s.Fragmentation > 1 || s.FragmentationAtEnd != 0 {
		t.Errorf("fragmentation %v on average, %v at the end (every job done)", s.Fragmentation, s.FragmentationAtEnd)
	}
	var text strings.Builder
	WriteText(&text, s)
	if !strings.Contains(text.String(), "utilization nvidia.com/gpu") || !strings.Contains(text.String(), "train") {
		t.Errorf("text summary:\n%s", text.String())
	}
}

// TestErrors: a scenario's mistakes name their field.
func TestErrors(t *testing.T) {
	for in, want := range map[string]string{
		"name: x\ncluster: {}\nworkload: {generators: [{name: a, count: 1, runtime: 1m, requests: {cpu: '1'}}]}":                                                                                   "cluster: Required value: nodeGroups or trace",
		"name: x\ncluster: {nodeGroups: [{name: n, count: 0, resources: {cpu: '1', memory: 1Gi}}]}\nworkload: {generators: [{name: a, count: 1, runtime: 1m, requests: {cpu: '1'}}]}":              "cluster.nodeGroups[0].count: Invalid value: 0: must be at least 1",
		"name: x\ncluster: {nodeGroups: [{name: n, count: 1, resources: {cpu: '1', memory: 1Gi}}]}\nworkload: {generators: [{name: a, queue: nope, count: 1, runtime: 1m, requests: {cpu: '1'}}]}": `workload.generators[0].queue: Not found: "nope"`,
		"name: x\nclustr: {}\n": `unknown field "clustr"`,
		"name: x\ncluster: {nodeGroups: [{name: n, count: 1, resources: {cpu: '1', memory: 1Gi}}]}\nloadAware: {use: {BE: {min: 0.5, max: 0.2}}}":        "loadAware.use[BE]: min 0.5 and max 0.2 must satisfy 0 <= min <= max",
		"name: x\ncluster: {nodeGroups: [{name: n, count: 1, resources: {cpu: '1', memory: 1Gi}}]}\nloadAware: {descheduler: {lowWatermark: {cpu: 90}}}": "loadAware.descheduler: lowWatermark.cpu: Invalid value: 90: must not be above highWatermark.cpu (80)",
	} {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// TestFederation: jobs go through the global dispatcher to both members;
// the research queue never holds more than its 12-GPU capability across
// them, and every job finishes.
func TestFederation(t *testing.T) {
	r := run(t, "testdata/federation.yaml")
	s := Summarize(r)
	if s.Jobs != 90 || s.Finished != 90 {
		t.Fatalf("%d jobs, %d finished", s.Jobs, s.Finished)
	}
	clusters := map[string]int{}
	type change struct {
		at   time.Duration
		gpus int64
	}
	var changes []change
	for _, j := range r.Jobs {
		clusters[j.Cluster]++
		if j.Released < j.Submit || j.Start < j.Released {
			t.Errorf("%s: submitted %s, released %s, started %s", j.Name, j.Submit, j.Released, j.Start)
		}
		if j.Queue == "research" {
			g := j.Requests.Name("nvidia.com/gpu", resource.DecimalSI).Value() * int64(j.Tasks)
			changes = append(changes, change{j.Released, g}, change{j.End, -g})
		}
	}
	if clusters["east"] == 0 || clusters["west"] == 0 || clusters[""] != 0 {
		t.Errorf("jobs per cluster %v", clusters)
	}
	slices.SortFunc(changes, func(a, b change) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.gpus, b.gpus)) })
	var held, most int64
	for _, c := range changes {
		held += c.gpus
		most = max(most, held)
	}
	if most > 12 || most < 8 {
		t.Errorf("research held at most %d GPUs at once, capability 12", most)
	}
}

// TestHyperJobs: each 24-GPU HyperJob is split into children over both
// members (neither holds 24), released together: its children start at
// the same time.
func TestHyperJobs(t *testing.T) {
	r := run(t, "testdata/hyperjobs.yaml")
	if r.Unplanned != 0 || r.RollBacks != 0 {
		t.Fatalf("%d HyperJobs never planned, %d plans rolled back", r.Unplanned, r.RollBacks)
	}
	children := map[string][]JobRecord{}
	for _, j := range r.Jobs {
		if hj, _, ok := strings.Cut(j.Name, "-train-"); ok {
			children[hj] = append(children[hj], j)
		}
	}
	if len(children) != 5 {
		t.Fatalf("%d HyperJobs with children: %v", len(children), children)
	}
	for hj, cs := range children {
		gpus, clusters := int64(0), map[string]bool{}
		for _, c := range cs {
			gpus += c.Requests.Name("nvidia.com/gpu", resource.DecimalSI).Value() * int64(c.Tasks)
			clusters[c.Cluster] = true
			if c.Start != cs[0].Start || c.Start < 0 || c.End < 0 {
				t.Errorf("%s: child %s started at %s, its sibling at %s", hj, c.Name, c.Start, cs[0].Start)
			}
		}
		if gpus != 24 || len(clusters) != 2 {
			t.Errorf("%s: %d GPUs over clusters %v", hj, gpus, clusters)
		}
	}
}

// TestFillCards: tasks drawn from the slice fill its GPU cards under each
// deviceshare policy, and its virtual GPUs under each vgpu policy: every
// GPU task that starts holds cards, no card holds more than its memory
// (nor, with vGPUs, more shares or cores than it has), the draw and the
// placements repeat, and the draw asks for 1.3 times the cluster's GPUs.
func TestFillCards(t *testing.T) {
	for _, policy := range []string{"binpack", "spread", "fgd", "vgpu/binpack", "vgpu/spread", "mig/binpack", "dra"} {
		t.Run(policy, func(t *testing.T) {
			load := func() *Scenario {
				s, err := Load("testdata/fill-cards-slice.yaml")
				if err != nil {
					t.Fatal(err)
				}
				// The line's own indentation, for a new key.
				line := s.Scheduler[strings.LastIndex(s.Scheduler[:strings.Index(s.Scheduler, "schedulePolicy: fgd")], "\n")+1:]
				indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
				kind, p, _ := strings.Cut(policy, "/")
				switch kind {
				case "vgpu", "mig":
					s.Scheduler = strings.Replace(s.Scheduler, "schedulePolicy: fgd", "vgpu: true\n"+indent+"schedulePolicy: "+p, 1)
					s.Cluster.Trace.GPUCards, s.Cluster.Trace.VGPU = false, true
					s.Workload.Trace.GPUCards, s.Workload.Trace.VGPU = false, true
					if kind == "mig" {
						s.Cluster.Trace.MIG, s.Workload.Trace.MIG = "A100-SXM4-80GB", true
					}
					return s
				case "dra":
					// kube-scheduler's DynamicResources allocates the
					// devices; deviceshare has no part.
					s.Scheduler = strings.Replace(s.Scheduler, "- name: predicates\n", "- name: predicates\n"+indent[:len(indent)-2]+"args: {dynamicResourceAllocation: true}\n", 1)
					s.Scheduler = strings.Replace(s.Scheduler, "schedulePolicy: fgd", "schedulePolicy: binpack", 1)
					s.Cluster.Trace.GPUCards, s.Cluster.Trace.DRA = false, true
					s.Workload.Trace.GPUCards, s.Workload.Trace.DRA = false, true
					return s
				}
				s.Scheduler = strings.Replace(s.Scheduler, "schedulePolicy: fgd", "schedulePolicy: "+policy, 1)
				return s
			}
			r, err := Run(t.Context(), load())
			if err != nil {
				t.Fatal(err)
			}
			var asked float64
			gpuStarted := 0
			for _, j := range r.Jobs {
				q := j.Requests[trace.GPUMilli]
				asked += float64(q.Value())
				if j.Start >= 0 && !q.IsZero() {
					gpuStarted++
				}
			}
			if c := r.Capacity[trace.GPUMilli]; asked < 1.3*c || asked > 1.3*c+8000 {
				t.Errorf("the draw asks for %.0f milli-GPUs, want 1.3 x %.0f (and less than one more task)", asked, c)
			}
			s := Summarize(r)
			if r.CardOvercommits != 0 || r.CardPlacements != gpuStarted || gpuStarted == 0 {
				t.Errorf("%d card placements, %d over a card, for %d GPU tasks started", r.CardPlacements, r.CardOvercommits, gpuStarted)
			}
			if s.PeakGPUAllocation < 0.5 || s.PeakGPUAllocation > 1 {
				t.Errorf("GPU allocation %.3f", s.PeakGPUAllocation)
			}
			// What the cards' shares hold: on MIG cards whole instances,
			// at least what was asked; DRA devices exactly what was asked.
			switch held := s.CardMemoryHeld; {
			case strings.HasPrefix(policy, "mig") && held < s.PeakGPUAllocation:
				t.Errorf("MIG instances hold %.3f of the cards, less than the %.3f asked", held, s.PeakGPUAllocation)
			case policy == "dra" && math.Abs(held-s.PeakGPUAllocation) > 1e-9:
				t.Errorf("DRA claims hold %.3f of the devices, want the %.3f asked", held, s.PeakGPUAllocation)
			}
			again, err := Run(t.Context(), load())
			if err != nil {
				t.Fatal(err)
			}
			var a, b bytes.Buffer
			if err := WriteJobs(&a, r); err != nil {
				t.Fatal(err)
			}
			if err := WriteJobs(&b, again); err != nil {
				t.Fatal(err)
			}
			if a.String() != b.String() {
				t.Errorf("two runs differ")
			}
		})
	}
}

// TestCardErrors: cards on tasks need cards on nodes; a sample has a load.
func TestCardErrors(t *testing.T) {
	base := "name: x\ncluster: {trace: {format: alibaba, nodes: n.csv}}\nworkload: {trace: {format: alibaba, tasks: t.csv, %s}}"
	for in, want := range map[string]string{
		"gpuCards: true":                    "workload.trace.gpuCards: Invalid value: true: the tasks ask for GPU cards, and no cluster's trace nodes have them: set gpuCards in cluster.trace too",
		"sample: {gpuLoad: 0}":              "workload.trace.sample.gpuLoad: Invalid value: 0: must be positive",
		"repeat: 2, sample: {gpuLoad: 1.3}": "workload.trace.repeat: Invalid value: 2: a sample draws as many tasks as its gpuLoad asks; repeat has no meaning with it",
		"vgpu: true":                        "workload.trace.vgpu: Invalid value: true: the tasks ask for virtual GPUs, and no cluster's trace nodes register them: set vgpu in cluster.trace too",
		"vgpu: true, gpuCards: true":        "workload.trace: Invalid value: \"gpuCards: true, vgpu: true, dra: false\": a task asks for one of GPU cards (gpuCards), virtual GPUs (vgpu) and DRA devices (dra)",
		"mig: true":                         "workload.trace.mig: Invalid value: true: MIG-sized requests are virtual GPUs: set vgpu too",
		"vgpu: true, mig: true":             "workload.trace.mig: Invalid value: true: the tasks ask for MIG instances, and no cluster's trace nodes have MIG cards: set mig in cluster.trace too",
		"dra: true":                         "workload.trace.dra: Invalid value: true: the tasks ask for DRA devices, and no cluster's trace nodes publish them: set dra in cluster.trace too",
	} {
		if _, err := Parse([]byte(strings.Replace(base, "%s", in, 1))); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// TestDRANeedsThePlugin: DRA devices in a scenario need the scheduler to
// allocate them.
func TestDRANeedsThePlugin(t *testing.T) {
	s, err := Load("testdata/fill-cards-slice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Cluster.Trace.GPUCards, s.Cluster.Trace.DRA = false, true
	s.Workload.Trace.GPUCards, s.Workload.Trace.DRA = false, true
	want := "the predicates plugin needs dynamicResourceAllocation: true"
	if _, err := Run(t.Context(), s); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

// TestMIGCardErrors: MIG cards are virtual GPUs of a model with a
// geometry.
func TestMIGCardErrors(t *testing.T) {
	base := "name: x\ncluster: {trace: {format: alibaba, nodes: n.csv, %s}}\nworkload: {trace: {format: alibaba, tasks: t.csv}}"
	for in, want := range map[string]string{
		"mig: A100-SXM4-80GB":             "cluster.trace.mig: Invalid value: \"A100-SXM4-80GB\": MIG cards are registered as virtual GPUs: set vgpu too",
		"vgpu: true, mig: H100-SXM5-80GB": "cluster.trace.mig: Unsupported value: \"H100-SXM5-80GB\": supported values: \"A30\", \"A100-SXM4-40GB\"",
	} {
		if _, err := Parse([]byte(strings.Replace(base, "%s", in, 1))); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// TestHyperJobRollBack: a HyperJob whose child cannot start in its member
// (the summary has room, no node does) is rolled back every start timeout
// and planned again with a new child, released as the last is deleted.
func TestHyperJobRollBack(t *testing.T) {
	r := run(t, "testdata/hyperjob-rollback.yaml")
	if r.RollBacks != 5 || len(r.Jobs) != 6 {
		t.Fatalf("%d roll backs, %d child jobs; want 5 and 6", r.RollBacks, len(r.Jobs))
	}
	for i, j := range r.Jobs {
		if want := time.Duration(i) * 10 * time.Minute; j.Released != want || j.Start >= 0 {
			t.Errorf("%s: released at %s, started at %s; want released at %s, never started", j.Name, j.Released, j.Start, want)
		}
		if j.RolledBack != (i < 5) {
			t.Errorf("%s: rolled back %v", j.Name, j.RolledBack)
		}
	}
}

// TestHyperJobRollBackOfAStartedChild: rolling back deletes a child that
// started too, which gives its GPUs back: the next plan's child starts on
// the same node at once, and the GPUs counted allocated never exceed the
// node's 8.
func TestHyperJobRollBackOfAStartedChild(t *testing.T) {
	r := run(t, "testdata/hyperjob-rollback-started.yaml")
	got := map[string]string{}
	for _, j := range r.Jobs {
		got[j.Name] = fmt.Sprintf("%s start=%s rolledBack=%v", j.Cluster, j.Start, j.RolledBack)
	}
	want := map[string]string{
		"big-00000-train-0":    "east start=-1ns rolledBack=true",
		"big-00000-train-1":    "west start=0s rolledBack=true",
		"big-00000-train-0-a1": "east start=-1ns rolledBack=false",
		"big-00000-train-1-a1": "west start=10m0s rolledBack=false",
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("children (-want,+got):\n%s", diff)
	}
	for _, s := range r.Usage {
		if g := s.Allocated["nvidia.com/gpu"]; g > 8 {
			t.Errorf("at %s, %v GPUs allocated on a cluster whose only 8-GPU node holds one child", s.At, g)
		}
	}
}

// TestGPUNodeReservation: on the slice filled past its GPUs, the
// predicates plugin's proportional reservation keeps CPU and memory on
// GPU nodes for GPU tasks: more GPUs are allocated and fewer are stranded
// than without it, and every CPU-only task still starts (on the nodes
// without GPUs, or where room is left over). The figures are pinned.
func TestGPUNodeReservation(t *testing.T) {
	type figures struct {
		gpuStarted, cpuStarted, cpuTasks int
		allocation, strandedAtEnd        float64
	}
	measure := func(reserve bool) figures {
		s, err := Load("testdata/reserve-slice.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if reserve {
			const plain, reserving = "  - name: predicates\n",
				"  - name: predicates\n    args:\n      proportional:\n        resources:\n          alibaba.com/gpu-milli: {cpu: 4m, memory: 32Mi}\n"
			if !strings.Contains(s.Scheduler, plain) {
				t.Fatalf("no predicates plugin in the scheduler configuration:\n%s", s.Scheduler)
			}
			s.Scheduler = strings.Replace(s.Scheduler, plain, reserving, 1)
		}
		r, err := Run(t.Context(), s)
		if err != nil {
			t.Fatal(err)
		}
		var f figures
		for _, j := range r.Jobs {
			q := j.Requests[trace.GPUMilli]
			gpu := !q.IsZero()
			if !gpu {
				f.cpuTasks++
			}
			switch {
			case j.Start < 0:
			case gpu:
				f.gpuStarted++
			default:
				f.cpuStarted++
			}
		}
		sum := Summarize(r)
		f.allocation, f.strandedAtEnd = sum.PeakGPUAllocation, sum.FragmentationAtEnd
		return f
	}
	without, with := measure(false), measure(true)
	t.Logf("without: %+v", without)
	t.Logf("with:    %+v", with)
	if with.cpuStarted != with.cpuTasks || without.cpuStarted != without.cpuTasks {
		t.Errorf("CPU-only tasks started: %d of %d without the reservation, %d of %d with it; want all",
			without.cpuStarted, without.cpuTasks, with.cpuStarted, with.cpuTasks)
	}
	if with.gpuStarted <= without.gpuStarted || with.allocation <= without.allocation || with.strandedAtEnd >= without.strandedAtEnd {
		t.Errorf("with the reservation %d GPU tasks started, %.3f of the GPUs allocated, %.3f stranded; without it %d, %.3f, %.3f: want more started and allocated, fewer stranded",
			with.gpuStarted, with.allocation, with.strandedAtEnd, without.gpuStarted, without.allocation, without.strandedAtEnd)
	}
	for _, p := range []struct {
		name      string
		got, want float64
	}{
		{"GPU allocation without", without.allocation, 0.928},
		{"GPU allocation with", with.allocation, 0.954},
		{"stranded at the end without", without.strandedAtEnd, 0.072},
		{"stranded at the end with", with.strandedAtEnd, 0.046},
	} {
		if math.Abs(p.got-p.want) > 0.01 {
			t.Errorf("%s = %.3f, want %.3f within 0.01", p.name, p.got, p.want)
		}
	}
}

// TestExperiments: every experiment of hack/sim loads and runs, on the
// trace slice in place of the whole trace, and places work: the files the
// simulator's page quotes figures from stay valid.
func TestExperiments(t *testing.T) {
	files, err := filepath.Glob("../../../hack/sim/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiments in hack/sim: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s := experimentOnSlice(t, f)
			r, err := Run(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			if sum := Summarize(r); sum.Started == 0 || sum.PeakGPUAllocation == 0 {
				t.Errorf("%d jobs started, %.3f of the GPUs allocated: want work placed", sum.Started, sum.PeakGPUAllocation)
			}
		})
	}
}

// experimentOnSlice reads an experiment of hack/sim with the trace's files
// replaced by the test slices.
func experimentOnSlice(t *testing.T, path string) *Scenario {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	slice := strings.NewReplacer(
		"TRACE/openb_node_list_all_node.csv", "testdata/openb_nodes_slice.csv",
		"TRACE/openb_pod_list_default.csv", "testdata/openb_pods_gpuspec33_slice.csv",
	).Replace(string(raw))
	if strings.Contains(slice, "TRACE/") {
		t.Fatalf("%s names a trace file the test has no slice of", path)
	}
	s, err := Parse([]byte(slice))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLoadAware runs the load-aware scenarios on the trace slice, where
// pods use a share of their requests: placing by use (the
// usage plugin) spreads the nodes' real CPU use more evenly than placing
// by requests; the descheduler takes the time nodes spend above the high
// watermark down, by evicting; placing by requests alone evicts nothing.
func TestLoadAware(t *testing.T) {
	load := map[string]*LoadSummary{}
	for _, name := range []string{"load-binpack", "load-deschedule", "load-usage", "load-usage-deschedule"} {
		s, err := Load("testdata/" + name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(t.Context(), s)
		if err != nil {
			t.Fatal(err)
		}
		if r.Load == nil || r.Load.Mean <= 0 {
			t.Fatalf("%s: load %+v, want the nodes' use reported", name, r.Load)
		}
		load[name] = r.Load
		t.Logf("%s: %+v", name, *r.Load)
	}
	by, use, desched := load["load-binpack"], load["load-usage"], load["load-deschedule"]
	if !(use.Spread < by.Spread) {
		t.Errorf("spread of node CPU use: %.1f points placing by use, %.1f by requests; want less by use", use.Spread, by.Spread)
	}
	if !(by.Hot > 0 && desched.Hot < by.Hot && desched.Evictions > 0) {
		t.Errorf("node-time above the high watermark: %.3f by requests, %.3f with the descheduler (%d evictions); want the descheduler to lower it",
			by.Hot, desched.Hot, desched.Evictions)
	}
	if by.Evictions != 0 || use.Evictions != 0 {
		t.Errorf("evictions without a descheduler: %d, %d", by.Evictions, use.Evictions)
	}
}
