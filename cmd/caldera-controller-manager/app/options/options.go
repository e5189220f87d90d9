// Package options holds caldera-controller-manager's flags and turns them
// into its configuration.
package options

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/component/metricsserving"
	"github.com/caldera-sh/caldera/pkg/controllers/descheduler"
	"github.com/caldera-sh/caldera/pkg/controllers/hypernode"
	"github.com/caldera-sh/caldera/pkg/controllers/sharding"
)

// Options are the controller manager's flags.
type Options struct {
	Kubeconfig string
	Master     string
	// Controllers to run: "*" means all; "-name" leaves one out.
	Controllers []string
	LeaderElect bool
	// LeaderElectionNamespace holds the Lease.
	LeaderElectionNamespace string
	HealthProbeBindAddress  string
	MetricsBindAddress      string
	// Metrics say how MetricsBindAddress is served.
	Metrics metricsserving.Options
	// Workers is the number of concurrent reconciles per controller.
	Workers int
	// SchedulerNames are the schedulers whose pods get PodGroups.
	SchedulerNames []string
	QPS            float32
	Burst          int
	// GracefulShutdown bounds how long running reconciles may take to end.
	GracefulShutdown time.Duration
	// HyperNodeDiscoveryConfig is a file with the networkTopologyDiscovery
	// section of Volcano's controller configuration; empty turns HyperNode
	// discovery off.
	HyperNodeDiscoveryConfig string

	// ShardingConfig is a file with the sharding controller's
	// configuration (scheduler-configs); empty turns the sharding
	// controller off.
	ShardingConfig string

	// DeschedulerConfig is a file with the load-aware descheduler's
	// configuration; empty turns the descheduler off.
	DeschedulerConfig string

	// known are the names of the controllers the manager can run.
	known []string
	// hyperNodeDiscovery is HyperNodeDiscoveryConfig, loaded by Complete.
	hyperNodeDiscovery *hypernode.Config
	// sharding is ShardingConfig, loaded by Complete.
	sharding *sharding.Config
	// descheduler is DeschedulerConfig, loaded by Complete.
	descheduler *descheduler.Config
}

// Config is what the controller manager runs with.
type Config struct {
	// Kubeconfig and Master reach the API server (both empty: in-cluster);
	// QPS and Burst bound the client.
	Kubeconfig string
	Master     string
	QPS        float32
	Burst      int
	// LeaderElect elects a leader, whose Lease is in
	// LeaderElectionNamespace, before running controllers.
	LeaderElect             bool
	LeaderElectionNamespace string
	// HealthProbeBindAddress and MetricsBindAddress serve /healthz and
	// /readyz, and /metrics; "0" turns them off.
	HealthProbeBindAddress string
	MetricsBindAddress     string
	// Metrics say how MetricsBindAddress is served.
	Metrics metricsserving.Options
	// GracefulShutdown bounds how long running reconciles may take to end.
	GracefulShutdown time.Duration
	// Workers is the number of concurrent reconciles per controller.
	Workers int
	// SchedulerNames are the schedulers whose pods get PodGroups.
	SchedulerNames []string
	// Controllers are the controllers to run, in the order the manager
	// knows them.
	Controllers []string
	// HyperNodeDiscovery configures HyperNode discovery; nil turns it off.
	HyperNodeDiscovery *hypernode.Config
	// Sharding configures the sharding controller, which runs only when
	// it is set.
	Sharding *sharding.Config
	// Descheduler configures the load-aware descheduler, which runs only
	// when it is set.
	Descheduler *descheduler.Config
}

// NewOptions returns the defaults for a manager that can run the
// controllers named known.
func NewOptions(known []string) *Options {
	return &Options{
		Controllers:             []string{"*"},
		LeaderElect:             true,
		LeaderElectionNamespace: "kube-system",
		HealthProbeBindAddress:  ":11252",
		MetricsBindAddress:      ":8081",
		Metrics:                 metricsserving.NewOptions(),
		// A reconcile waits on the API server; under a burst of Jobs,
		// 32 of them in flight create pods about a third faster than 8
		// (docs/performance.md).
		Workers:        32,
		SchedulerNames: []string{"volcano"},
		// The scheduler's default rate (200), so that the controller
		// creates pods (about 1.2 writes each) at least as fast as the
		// scheduler binds them (2 writes each: binding and event).
		QPS:              200,
		Burst:            400,
		GracefulShutdown: 30 * time.Second,
		known:            known,
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file; empty means in-cluster configuration")
	fs.StringVar(&o.Master, "master", o.Master, "API server address, overriding the kubeconfig's")
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf("controllers to run: * for all, -name to leave one out; known: %s", strings.Join(o.known, ", ")))
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "elect a leader among replicas before running controllers")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election Lease")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address of /healthz and /readyz; 0 turns them off")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of /metrics; 0 turns it off")
	o.Metrics.AddFlags(fs)
	fs.IntVar(&o.Workers, "workers", o.Workers, "concurrent reconciles per controller")
	fs.StringSliceVar(&o.SchedulerNames, "scheduler-name", o.SchedulerNames, "schedulers whose pods get PodGroups (repeatable)")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "queries per second to the API server")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "burst of queries to the API server")
	fs.DurationVar(&o.GracefulShutdown, "graceful-shutdown-timeout", o.GracefulShutdown, "how long running reconciles may take to finish on shutdown")
	fs.StringVar(&o.HyperNodeDiscoveryConfig, "hypernode-discovery-config", o.HyperNodeDiscoveryConfig,
		"file with a networkTopologyDiscovery section (Volcano's controller configuration may be given whole); empty turns HyperNode discovery off")
	fs.StringVar(&o.ShardingConfig, "sharding-config", o.ShardingConfig,
		"file with the sharding controller's scheduler-configs (the NodeShard of each scheduler instance and its policy); empty turns the sharding controller off")
	fs.StringVar(&o.DeschedulerConfig, "descheduler-config", o.DeschedulerConfig,
		"file with the load-aware descheduler's configuration (watermarks, interval, caps; docs/load-aware.md); empty turns the descheduler off")
}

// Complete loads --hypernode-discovery-config and --sharding-config.
func (o *Options) Complete() error {
	o.descheduler = nil
	if o.DeschedulerConfig != "" {
		data, err := os.ReadFile(o.DeschedulerConfig)
		if err != nil {
			return fmt.Errorf("--descheduler-config: %w", err)
		}
		if o.descheduler, err = descheduler.LoadConfig(data); err != nil {
			return fmt.Errorf("--descheduler-config %s: %w", o.DeschedulerConfig, err)
		}
	}
	o.sharding = nil
	if o.ShardingConfig != "" {
		data, err := os.ReadFile(o.ShardingConfig)
		if err != nil {
			return fmt.Errorf("--sharding-config: %w", err)
		}
		if o.sharding, err = sharding.LoadConfig(data); err != nil {
			return fmt.Errorf("--sharding-config %s: %w", o.ShardingConfig, err)
		}
	}
	o.hyperNodeDiscovery = nil
	if o.HyperNodeDiscoveryConfig == "" {
		return nil
	}
	data, err := os.ReadFile(o.HyperNodeDiscoveryConfig)
	if err != nil {
		return fmt.Errorf("--hypernode-discovery-config: %w", err)
	}
	if o.hyperNodeDiscovery, err = hypernode.LoadConfig(data); err != nil {
		return fmt.Errorf("--hypernode-discovery-config %s: %w", o.HyperNodeDiscoveryConfig, err)
	}
	return nil
}

// Validate checks the options against the known controllers.
func (o *Options) Validate() field.ErrorList {
	var errs field.ErrorList
	for _, c := range o.Controllers {
		name := strings.TrimPrefix(c, "-")
		if c != "*" && !slices.Contains(o.known, name) {
			errs = append(errs, field.Invalid(field.NewPath("--controllers"), c,
				fmt.Sprintf("unknown controller %q (known: %s)", name, strings.Join(o.known, ", "))))
		}
		if c == sharding.ControllerName && o.ShardingConfig == "" {
			errs = append(errs, field.Invalid(field.NewPath("--controllers"), c, "the sharding controller needs --sharding-config"))
		}
		if c == descheduler.ControllerName && o.DeschedulerConfig == "" {
			errs = append(errs, field.Invalid(field.NewPath("--controllers"), c, "the descheduler needs --descheduler-config"))
		}
	}
	if o.Workers < 1 {
		errs = append(errs, field.Invalid(field.NewPath("--workers"), o.Workers, "must be at least 1"))
	}
	if len(o.SchedulerNames) == 0 {
		errs = append(errs, field.Required(field.NewPath("--scheduler-name"), "at least one"))
	}
	errs = append(errs, o.Metrics.Validate(o.MetricsBindAddress)...)
	return errs
}

// Config returns the controller manager's configuration.
func (o *Options) Config() (*Config, error) {
	if o.HyperNodeDiscoveryConfig != "" && o.hyperNodeDiscovery == nil {
		return nil, fmt.Errorf("--hypernode-discovery-config %s: not loaded; Complete loads it", o.HyperNodeDiscoveryConfig)
	}
	if o.ShardingConfig != "" && o.sharding == nil {
		return nil, fmt.Errorf("--sharding-config %s: not loaded; Complete loads it", o.ShardingConfig)
	}
	if o.DeschedulerConfig != "" && o.descheduler == nil {
		return nil, fmt.Errorf("--descheduler-config %s: not loaded; Complete loads it", o.DeschedulerConfig)
	}
	var enabled []string
	for _, name := range o.known {
		// The sharding controller runs only with its configuration.
		if name == sharding.ControllerName && o.sharding == nil {
			continue
		}
		// So does the descheduler.
		if name == descheduler.ControllerName && o.descheduler == nil {
			continue
		}
		if o.enabled(name) {
			enabled = append(enabled, name)
		}
	}
	return &Config{
		Kubeconfig:              o.Kubeconfig,
		Master:                  o.Master,
		QPS:                     o.QPS,
		Burst:                   o.Burst,
		LeaderElect:             o.LeaderElect,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		MetricsBindAddress:      o.MetricsBindAddress,
		Metrics:                 o.Metrics,
		GracefulShutdown:        o.GracefulShutdown,
		Workers:                 o.Workers,
		SchedulerNames:          o.SchedulerNames,
		Controllers:             enabled,
		HyperNodeDiscovery:      o.hyperNodeDiscovery,
		Sharding:                o.sharding,
		Descheduler:             o.descheduler,
	}, nil
}

// enabled reports whether --controllers asks for a controller.
func (o *Options) enabled(name string) bool {
	if slices.Contains(o.Controllers, "-"+name) {
		return false
	}
	return slices.Contains(o.Controllers, "*") || slices.Contains(o.Controllers, name)
}
