package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cmapp "github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app"
	cmoptions "github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app/options"
	schedapp "github.com/caldera-sh/caldera/cmd/caldera-scheduler/app"
	schedoptions "github.com/caldera-sh/caldera/cmd/caldera-scheduler/app/options"
	"github.com/caldera-sh/caldera/pkg/component"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
)

// SchedulerConfig is the scheduler configuration integration tests run
// with unless they need another: Volcano's default tiers plus binpack,
// short cycles, no leader election, no servers.
const SchedulerConfig = `apiVersion: scheduler.config.caldera.sh/v1alpha1
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

// StartScheduler runs caldera-scheduler with the configuration (YAML, in
// either format) in this process; stop ends it and reports how it ended.
func (f *Framework) StartScheduler(configYAML string) (stop func() error, err error) {
	cfg, err := config.Load([]byte(configYAML), profile.NameRegistry())
	if err != nil {
		return nil, err
	}
	cfg.ClientConnection.Kubeconfig = f.Kubeconfig()
	return runInProcess("scheduler", func(ctx context.Context) error { return schedapp.Run(ctx, &schedoptions.Config{Configuration: cfg}) }), nil
}

// StartSchedulerFile runs caldera-scheduler with the configuration file at
// path (either format), as a user would, except for what tests need: no
// leader election, no listening ports, and fast cycles.
func (f *Framework) StartSchedulerFile(path string) (stop func() error, err error) {
	cfg, err := config.LoadFile(path, profile.NameRegistry())
	if err != nil {
		return nil, err
	}
	cfg.LeaderElection.LeaderElect = new(false)
	cfg.HealthzBindAddress, cfg.MetricsBindAddress = "0", "0"
	cfg.Cycle.CoalesceWindow = &metav1.Duration{Duration: 10 * time.Millisecond}
	cfg.Cycle.Heartbeat = &metav1.Duration{Duration: 500 * time.Millisecond}
	cfg.ClientConnection.Kubeconfig = f.Kubeconfig()
	return runInProcess("scheduler", func(ctx context.Context) error { return schedapp.Run(ctx, &schedoptions.Config{Configuration: cfg}) }), nil
}

// StartControllerManager runs caldera-controller-manager in this process
// with the given controllers (nil: all). Controller names are unique per
// process, so a package starts it once; tests that restart it run the
// binary instead.
func (f *Framework) StartControllerManager(controllers []string) (stop func() error) {
	o := cmoptions.NewOptions(cmapp.ControllerNames())
	o.Kubeconfig = f.Kubeconfig()
	o.LeaderElect = false
	o.HealthProbeBindAddress, o.MetricsBindAddress = "0", "0"
	o.GracefulShutdown = 5 * time.Second
	if controllers != nil {
		o.Controllers = controllers
	}
	return runInProcess("controller manager", func(ctx context.Context) error {
		c, err := component.Configure(o)
		if err != nil {
			return err
		}
		return cmapp.Run(ctx, c)
	})
}

// runInProcess runs run until stop is called, then waits up to 30s for it.
func runInProcess(what string, run func(context.Context) error) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	return func() error {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			return nil
		case <-time.After(30 * time.Second):
			return errors.New(what + " did not stop within 30s")
		}
	}
}
