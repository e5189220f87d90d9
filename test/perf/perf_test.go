//go:build perf

package perf

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caldera-sh/caldera/pkg/controlplane"
)

var (
	workloadFlag   = flag.String("workload", "", "comma-separated workload names (files in workloads/) or .yaml paths; empty means every workload")
	sizeFlag       = flag.String("size", SizeSmall, "size to run: small, large, or another size the workload declares (medium)")
	schedulerFlag  = flag.String("scheduler", "both", "schedulers to run, in order: a comma-separated list of caldera, caldera-sharded (two instances, each on half the nodes), kube and noop (a binder without scheduling, the ceiling), or both (caldera,kube)")
	resultsFlag    = flag.String("results", "", "directory for the JSON results (and CPU profiles); empty writes none")
	qpsFlag        = flag.Float64("client-qps", 1000, "client QPS of every scheduler")
	burstFlag      = flag.Int("client-burst", 2000, "client burst of every scheduler")
	cpuProfileFlag = flag.Bool("cpuprofile", false, "record caldera-scheduler's CPU profile into -results")
	apiProfileFlag = flag.Bool("apiserverprofile", false, "record the API server's CPU profile over each scheduler's run into -results")
	workDirFlag    = flag.String("workdir", "", "where the control planes' files go; empty means the system's temporary directory")
	keepFlag       = flag.Bool("keep", false, "keep the control planes' files (logs, audit log) after runs without problems")
)

func TestMain(m *testing.M) {
	// controller-runtime's client logs through its own logger; without one
	// it prints a warning with a stack trace.
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(m.Run())
}

// TestPerf runs the benchmark as the flags say and prints the table. It
// fails on correctness problems only, never on timing.
func TestPerf(t *testing.T) {
	names, err := workloadRefs(*workloadFlag)
	if err != nil {
		t.Fatal(err)
	}
	schedulers, err := schedulerNames(*schedulerFlag)
	if err != nil {
		t.Fatal(err)
	}
	if (*cpuProfileFlag || *apiProfileFlag) && *resultsFlag == "" {
		t.Fatal("-cpuprofile and -apiserverprofile need -results")
	}
	if *resultsFlag != "" {
		// Profiles are written into it while the runs go on.
		if err := os.MkdirAll(*resultsFlag, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var all []Result
	for _, name := range names {
		w, err := LoadWorkload(WorkloadDir, name)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, runAndReport(t, w, *sizeFlag, schedulers)...)
	}
	if len(names) > 1 {
		fmt.Println()
		if err := PrintTable(os.Stdout, all); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSmall is the quick sanity run: the smallest workload that fits its
// nodes, at its small size, with both schedulers. It fails when a pod is
// left pending or is not bound exactly once, never on timing.
func TestSmall(t *testing.T) {
	names, err := WorkloadNames(WorkloadDir)
	if err != nil {
		t.Fatal(err)
	}
	var smallest *Workload
	for _, name := range names {
		w, err := LoadWorkload(WorkloadDir, name)
		if err != nil {
			t.Fatal(err)
		}
		if w.Saturating || w.Probe != nil {
			continue
		}
		if smallest == nil || w.Pods(SizeSmall) < smallest.Pods(SizeSmall) ||
			(w.Pods(SizeSmall) == smallest.Pods(SizeSmall) && w.Sizes[SizeSmall].Nodes < smallest.Sizes[SizeSmall].Nodes) {
			smallest = w
		}
	}
	if smallest == nil {
		t.Fatal("no workload that fits its nodes")
	}
	results := runAndReport(t, smallest, SizeSmall, []string{Caldera, Kube})
	for _, r := range results {
		if r.PodsBound != r.Pods {
			t.Errorf("%s: %d of %d pods bound", r.Scheduler, r.PodsBound, r.Pods)
		}
	}
}

// runAndReport runs one workload at one size, prints its table, writes its
// JSON and fails the test on any problem.
func runAndReport(t *testing.T, w *Workload, size string, schedulers []string) []Result {
	t.Helper()
	binDir, err := controlplane.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
		defer cancel()
	}
	o := RunOptions{
		BinDir:  binDir,
		WorkDir: *workDirFlag,
		Keep:    *keepFlag,
		Limits:  ClientLimits{QPS: float32(*qpsFlag), Burst: int32(*burstFlag)},
		Logf:    t.Logf,
	}
	if *cpuProfileFlag {
		o.ProfileDir = *resultsFlag
	}
	if *apiProfileFlag {
		o.APIServerProfileDir = *resultsFlag
	}
	started := time.Now()
	results, err := RunWorkload(ctx, w, size, schedulers, o)
	if len(results) > 0 {
		if perr := PrintTable(os.Stdout, results); perr != nil {
			t.Error(perr)
		}
		if *resultsFlag != "" {
			path, werr := WriteReport(*resultsFlag, w, started, results)
			if werr != nil {
				t.Error(werr)
			} else {
				t.Logf("results written to %s", path)
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		for _, p := range r.Problems {
			t.Errorf("%s/%s/%s: %s", r.Workload, r.Size, r.Scheduler, p)
		}
	}
	return results
}

func workloadRefs(flagValue string) ([]string, error) {
	if flagValue == "" {
		return WorkloadNames(WorkloadDir)
	}
	return strings.Split(flagValue, ","), nil
}

func schedulerNames(flagValue string) ([]string, error) {
	if flagValue == "both" {
		return []string{Caldera, Kube}, nil
	}
	names := strings.Split(flagValue, ",")
	for _, n := range names {
		if _, ok := Schedulers()[n]; !ok {
			return nil, fmt.Errorf("-scheduler=%q: want a comma-separated list of caldera, caldera-sharded, kube and noop, or both (caldera,kube)", flagValue)
		}
	}
	return names, nil
}
