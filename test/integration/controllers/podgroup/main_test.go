//go:build integration

// Package podgroup tests the PodGroup controller against a real API server,
// with kwok for nodes and pods, kube-controller-manager for Deployments and
// ReplicaSets, and the scheduler where a test schedules.
package podgroup

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/caldera-sh/caldera/pkg/controllers/podgroup"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(framework.Main(m, framework.Options{Kwok: true}, &fw))
}

// startController runs the PodGroup controller in this process, as
// caldera-controller-manager runs it, until the returned function is called.
func startController(t *testing.T) (stop func()) {
	t.Helper()
	mgr, err := ctrl.NewManager(fw.RESTConfig(), ctrl.Options{
		Scheme:                 fw.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Tests start the controller again in the same process.
		Controller: ctrlconfig.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := podgroup.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("caldera-podgroup-controller"), []string{"volcano"})
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("controller manager did not stop")
		}
	}
	t.Cleanup(stop)
	return stop
}

// startKubeControllerManager runs kube-controller-manager (Deployments,
// ReplicaSets, garbage collection) for the rest of the test.
func startKubeControllerManager(t *testing.T) {
	t.Helper()
	kcm, err := controlplane.StartKubeControllerManager(t.Context(), fw.Cluster.APIServer, controlplane.KubeControllerManagerOptions{
		BinDir: fw.BinDir,
		Dir:    filepath.Join(fw.Dir, "kcm-"+t.Name()),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := kcm.Stop(); err != nil {
			t.Errorf("stopping kube-controller-manager: %v", err)
		}
	})
}

// startScheduler runs caldera-scheduler in this process for the rest of
// the test, serving what it concludes about the jobs it leaves waiting.
func startScheduler(t *testing.T) *framework.Explanations {
	t.Helper()
	return fw.StartSchedulerExplained(t, framework.SchedulerConfig)
}
