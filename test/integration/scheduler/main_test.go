//go:build integration

package scheduler

import (
	"os"
	"testing"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caldera-sh/caldera/test/integration/framework"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(framework.Main(m, framework.Options{Kwok: true}, &fw))
}

// startScheduler runs the scheduler in this process until the returned
// function is called.
func startScheduler(t *testing.T) (stop func()) {
	t.Helper()
	s, err := fw.StartScheduler(framework.SchedulerConfig)
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := s(); err != nil {
			t.Error(err)
		}
	}
}
