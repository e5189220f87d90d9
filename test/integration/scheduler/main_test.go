//go:build integration

package scheduler

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caldera-sh/caldera/cmd/caldera-scheduler/app"
	"github.com/caldera-sh/caldera/pkg/scheduler/apis/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	"github.com/caldera-sh/caldera/test/integration/framework"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(framework.Main(m, framework.Options{Kwok: true}, &fw))
}

// testConfig is the scheduler configuration the tests run with.
const testConfig = `apiVersion: scheduler.config.caldera.sh/v1alpha1
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
cycle:
  coalesceWindow: 10ms
  heartbeat: 500ms
leaderElection:
  leaderElect: false
healthzBindAddress: "0"
metricsBindAddress: "0"
`

// startScheduler runs the scheduler in this process until the returned
// function is called.
func startScheduler(t *testing.T) (stop func()) {
	t.Helper()
	cfg, err := config.Load([]byte(testConfig), profile.NameRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientConnection.Kubeconfig = fw.Kubeconfig()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg, "") }()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("scheduler: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("scheduler did not stop")
		}
	}
}
