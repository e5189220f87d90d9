// Package options holds caldera-controller-manager's flags.
package options

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
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
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Controllers:             []string{"*"},
		LeaderElect:             true,
		LeaderElectionNamespace: "kube-system",
		HealthProbeBindAddress:  ":11252",
		MetricsBindAddress:      ":8081",
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
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet, all []string) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file; empty means in-cluster configuration")
	fs.StringVar(&o.Master, "master", o.Master, "API server address, overriding the kubeconfig's")
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf("controllers to run: * for all, -name to leave one out; known: %s", strings.Join(all, ", ")))
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "elect a leader among replicas before running controllers")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election Lease")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address of /healthz and /readyz; 0 turns them off")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of /metrics; 0 turns it off")
	fs.IntVar(&o.Workers, "workers", o.Workers, "concurrent reconciles per controller")
	fs.StringSliceVar(&o.SchedulerNames, "scheduler-name", o.SchedulerNames, "schedulers whose pods get PodGroups (repeatable)")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "queries per second to the API server")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "burst of queries to the API server")
	fs.DurationVar(&o.GracefulShutdown, "graceful-shutdown-timeout", o.GracefulShutdown, "how long running reconciles may take to finish on shutdown")
	fs.StringVar(&o.HyperNodeDiscoveryConfig, "hypernode-discovery-config", o.HyperNodeDiscoveryConfig,
		"file with a networkTopologyDiscovery section (Volcano's controller configuration may be given whole); empty turns HyperNode discovery off")
}

// Validate checks the options against the known controllers.
func (o *Options) Validate(all []string) error {
	var errs []string
	for _, c := range o.Controllers {
		name := strings.TrimPrefix(c, "-")
		if c != "*" && !slices.Contains(all, name) {
			errs = append(errs, fmt.Sprintf("--controllers: unknown controller %q (known: %s)", name, strings.Join(all, ", ")))
		}
	}
	if o.Workers < 1 {
		errs = append(errs, "--workers: must be at least 1")
	}
	if len(o.SchedulerNames) == 0 {
		errs = append(errs, "--scheduler-name: at least one is required")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Enabled reports whether a controller is to run.
func (o *Options) Enabled(name string) bool {
	if slices.Contains(o.Controllers, "-"+name) {
		return false
	}
	return slices.Contains(o.Controllers, "*") || slices.Contains(o.Controllers, name)
}
