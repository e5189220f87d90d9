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

	queuecontroller "github.com/caldera-sh/caldera/pkg/controllers/queue"
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

// startScheduler runs caldera-scheduler in this process for the rest of
// the test.
func startScheduler(t *testing.T) {
	t.Helper()
	stop, err := fw.StartScheduler(framework.SchedulerConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
}
