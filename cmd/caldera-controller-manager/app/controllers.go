package app

import (
	"fmt"
	"os"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app/options"
	"github.com/caldera-sh/caldera/pkg/controllers/hypernode"
	"github.com/caldera-sh/caldera/pkg/controllers/job"
	"github.com/caldera-sh/caldera/pkg/controllers/podgroup"
	"github.com/caldera-sh/caldera/pkg/controllers/queue"
)

// controller is one controller the manager can run.
type controller struct {
	name  string
	setup func(mgr ctrl.Manager, o *options.Options) error
}

// controllers lists every controller, in the order they are set up.
func controllers() []controller {
	return []controller{
		{name: job.Name, setup: func(mgr ctrl.Manager, o *options.Options) error {
			return job.NewReconciler(mgr.GetClient(), mgr.GetEventRecorderFor("caldera-job-controller"), o.SchedulerNames, clock.RealClock{}).
				SetupWithManager(mgr, o.Workers)
		}},
		{name: podgroup.ControllerName, setup: func(mgr ctrl.Manager, o *options.Options) error {
			return podgroup.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("caldera-podgroup-controller"), o.SchedulerNames).
				SetupWithManager(mgr)
		}},
		{name: queue.ControllerName, setup: func(mgr ctrl.Manager, _ *options.Options) error {
			return queue.NewReconciler(mgr.GetClient(), mgr.GetEventRecorder("caldera-queue-controller"), clock.RealClock{}, queue.DefaultCommandWait).
				SetupWithManager(mgr)
		}},
		{name: hypernode.ControllerName, setup: func(mgr ctrl.Manager, o *options.Options) error {
			var cfg *hypernode.Config
			if o.HyperNodeDiscoveryConfig != "" {
				data, err := os.ReadFile(o.HyperNodeDiscoveryConfig)
				if err != nil {
					return fmt.Errorf("--hypernode-discovery-config: %w", err)
				}
				if cfg, err = hypernode.LoadConfig(data); err != nil {
					return fmt.Errorf("--hypernode-discovery-config %s: %w", o.HyperNodeDiscoveryConfig, err)
				}
			}
			return hypernode.NewReconciler(mgr.GetClient(), cfg, clock.RealClock{}).SetupWithManager(mgr)
		}},
	}
}

func controllerNames() []string {
	var names []string
	for _, c := range controllers() {
		names = append(names, c.name)
	}
	return names
}
