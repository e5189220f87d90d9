//go:build perf

package perf

import (
	"flag"
	"testing"

	"github.com/caldera-sh/caldera/pkg/controlplane"
)

var (
	controllerJobsFlag  = flag.Int("controller-jobs", 1000, "TestControllerPerf: Volcano Jobs created at once")
	controllerPodsFlag  = flag.Int("controller-pods-per-job", 10, "TestControllerPerf: pods per Job")
	controllerNodesFlag = flag.Int("controller-nodes", 1000, "TestControllerPerf: simulated nodes (32 cores each)")
	controllerAdmitOnly = flag.Bool("controller-admit-only", false, "TestControllerPerf: run the scheduler's enqueue action alone (PodGroups admitted, pods created, nothing bound)")
)

// TestControllerPerf creates many Volcano Jobs at once on a cluster running
// caldera-controller-manager and caldera-scheduler and reports how soon
// every pod exists, every PodGroup is admitted and every pod is bound, with
// the controller's CPU time and peak memory. It fails on correctness
// problems only (pods missing or unbound), never on timing.
func TestControllerPerf(t *testing.T) {
	binDir, err := controlplane.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	r, err := RunControllers(t.Context(), ControllerOptions{
		BinDir:     binDir,
		Nodes:      *controllerNodesFlag,
		Jobs:       *controllerJobsFlag,
		PodsPerJob: *controllerPodsFlag,
		Limits:     ClientLimits{QPS: float32(*qpsFlag), Burst: int32(*burstFlag)},
		WorkDir:    *workDirFlag,
		AdmitOnly:  *controllerAdmitOnly,
		Logf:       t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d jobs x %d pods on %d nodes: submitted in %.1fs; all pods exist at %.1fs (%.0f pods/s created), all PodGroups admitted at %.1fs, all pods bound at %.1fs (%.0f pods/s bound)",
		r.Jobs, r.Pods/r.Jobs, r.Nodes, r.SubmitSecs, r.AllPodsSecs, r.PodsCreatedPerSec, r.AllInqueueSecs, r.AllBoundSecs, r.PodsBoundPerSec)
	t.Logf("controller: %.1f CPU s, peak RSS %d MiB; scheduler %.1f CPU s; API server %.1f CPU s",
		r.ControllerCPUSecs, r.ControllerPeakRSS>>20, r.SchedulerCPUSecs, r.APIServerCPUSecs)
	t.Logf("controller writes: %d %v (failed %d %v); scheduler writes: %d %v",
		r.ControllerWrites.Total, r.ControllerWrites.ByKind, r.ControllerWrites.Failed, r.ControllerWrites.FailedByKind,
		r.SchedulerWrites.Total, r.SchedulerWrites.ByKind)
	if *resultsFlag != "" {
		if err := WriteControllerResult(*resultsFlag, r); err != nil {
			t.Error(err)
		}
	}
}
