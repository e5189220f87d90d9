//go:build integration

// Package queue tests the Queue controller against a real API server, with
// kwok for nodes and pods and the scheduler writing its part of the queue
// status.
package queue

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/caldera-sh/caldera/cmd/caldera-scheduler/app"
	queuecontroller "github.com/caldera-sh/caldera/pkg/controllers/queue"
	schedconfig "github.com/caldera-sh/caldera/pkg/scheduler/apis/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	"github.com/caldera-sh/caldera/test/integration/framework"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(framework.Main(m, framework.Options{Kwok: true}, &fw))
}

// startController runs the Queue controller in this process, as
// caldera-controller-manager runs it, until the test ends.
func startController(t *testing.T) {
	t.Helper()
	mgr, err := ctrl.NewManager(fw.RESTConfig(), ctrl.Options{
		Scheme:                 fw.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Each test starts the controller again in the same process.
		Controller: ctrlconfig.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := queuecontroller.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("caldera-queue-controller"), clock.RealClock{}, queuecontroller.DefaultCommandWait)
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("controller manager did not stop")
		}
	})
}

// schedulerConfig is the scheduler configuration the tests run with.
const schedulerConfig = `apiVersion: scheduler.config.caldera.sh/v1alpha1
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

// startScheduler runs caldera-scheduler in this process for the rest of
// the test.
func startScheduler(t *testing.T) {
	t.Helper()
	cfg, err := schedconfig.Load([]byte(schedulerConfig), profile.NameRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientConnection.Kubeconfig = fw.Kubeconfig()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg, "") }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("scheduler: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("scheduler did not stop")
		}
	})
}
