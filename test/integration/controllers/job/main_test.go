//go:build integration

package job

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	cmapp "github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app"
	cmoptions "github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app/options"
	schedapp "github.com/caldera-sh/caldera/cmd/caldera-scheduler/app"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/scheduler/apis/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	"github.com/caldera-sh/caldera/test/integration/framework"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	var nodes []controlplane.NodeSpec
	for i := range 10 {
		nodes = append(nodes, controlplane.NodeSpec{Name: fmt.Sprintf("n%d", i), Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"), corev1.ResourcePods: resource.MustParse("200"),
		}})
	}
	os.Exit(framework.Main(m, framework.Options{Nodes: nodes, Setup: func(ctx context.Context, f *framework.Framework) (func(), error) {
		if err := f.Client.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
			return nil, err
		}
		stopScheduler, err := startScheduler(f)
		if err != nil {
			return nil, err
		}
		stopControllers := startControllers(f)
		return func() { stopControllers(); stopScheduler() }, nil
	}}, &fw))
}

// startScheduler runs caldera-scheduler in this process for the package.
func startScheduler(f *framework.Framework) (func(), error) {
	cfg, err := config.Load([]byte(`apiVersion: scheduler.config.caldera.sh/v1alpha1
kind: SchedulerConfiguration
cycle: {coalesceWindow: 10ms, heartbeat: 500ms}
leaderElection: {leaderElect: false}
healthzBindAddress: "0"
metricsBindAddress: "0"
`), profile.NameRegistry())
	if err != nil {
		return nil, err
	}
	cfg.ClientConnection.Kubeconfig = f.Kubeconfig()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := schedapp.Run(ctx, cfg, ""); err != nil {
			fmt.Fprintln(os.Stderr, "scheduler:", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}

// startControllers runs caldera-controller-manager in this process until
// the returned function is called. Controller names are unique per process,
// so it runs once for the package; tests that restart the controllers run
// the binary.
func startControllers(f *framework.Framework) (stop func()) {
	o := cmoptions.NewOptions()
	o.Kubeconfig = f.Kubeconfig()
	o.LeaderElect = false
	o.HealthProbeBindAddress, o.MetricsBindAddress = "0", "0"
	o.GracefulShutdown = 5 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmapp.Run(ctx, o) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				fmt.Fprintln(os.Stderr, "controller manager:", err)
			}
		case <-time.After(30 * time.Second):
			fmt.Fprintln(os.Stderr, "controller manager did not stop")
		}
	}
}
