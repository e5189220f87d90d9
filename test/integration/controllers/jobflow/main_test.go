//go:build integration

package jobflow

import (
	"context"
	"os"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/caldera-sh/caldera/pkg/controllers/jobflow"
	"github.com/caldera-sh/caldera/test/integration/framework"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(framework.Main(m, framework.Options{}, &fw))
}

// startController runs the JobFlow controller in a manager of its own until
// the returned function is called.
func startController(t *testing.T) (stop func()) {
	t.Helper()
	// Each test runs its own controller: the names repeat in the process.
	mgr, err := ctrl.NewManager(fw.RESTConfig(), ctrl.Options{Scheme: fw.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := jobflow.NewReconciler(mgr.GetClient(), mgr.GetEventRecorderFor("caldera-jobflow-controller"), clock.RealClock{}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
