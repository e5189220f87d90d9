// Package options holds caldera-webhook's flags and turns them into its
// configuration.
package options

import (
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/component/metricsserving"
	"github.com/caldera-sh/caldera/pkg/webhooks/serving"
)

// Options are the webhook's flags.
type Options struct {
	Kubeconfig string
	// Options are the server's: address, certificate, registration.
	serving.Options
	// SchedulerNames are the schedulers whose pods are checked.
	SchedulerNames         []string
	HealthProbeBindAddress string
	MetricsBindAddress     string
	// Metrics say how MetricsBindAddress is served.
	Metrics metricsserving.Options
}

// Config is what the webhook runs with.
type Config struct {
	// Kubeconfig reaches the API server; empty means in-cluster.
	Kubeconfig string
	// Serving are the server's options, completed.
	Serving serving.Options
	// SchedulerNames are the schedulers whose pods are checked.
	SchedulerNames []string
	// HealthProbeBindAddress and MetricsBindAddress serve /healthz and
	// /readyz, and /metrics; "0" turns them off.
	HealthProbeBindAddress string
	MetricsBindAddress     string
	// Metrics say how MetricsBindAddress is served.
	Metrics metricsserving.Options
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Options:                serving.NewOptions("caldera-webhook"),
		SchedulerNames:         []string{"volcano"},
		HealthProbeBindAddress: ":11254",
		MetricsBindAddress:     "0",
		Metrics:                metricsserving.NewOptions(),
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file; empty means in-cluster configuration")
	o.Options.AddFlags(fs)
	fs.StringSliceVar(&o.SchedulerNames, "scheduler-name", o.SchedulerNames, "schedulers whose pods are checked (repeatable)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address of /healthz and /readyz; 0 turns them off")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of /metrics (request counts and latencies per webhook); 0 turns it off")
	o.Metrics.AddFlags(fs)
}

// Complete fills in the server's flags that depend on others.
func (o *Options) Complete() error {
	o.Options.Complete()
	return nil
}

// Validate checks the options.
func (o *Options) Validate() field.ErrorList {
	errs := o.Options.Validate()
	if len(o.SchedulerNames) == 0 {
		errs = append(errs, field.Required(field.NewPath("--scheduler-name"), "at least one"))
	}
	errs = append(errs, o.Metrics.Validate(o.MetricsBindAddress)...)
	return errs
}

// Config returns the webhook's configuration.
func (o *Options) Config() (*Config, error) {
	return &Config{
		Kubeconfig:             o.Kubeconfig,
		Serving:                o.Options,
		SchedulerNames:         o.SchedulerNames,
		HealthProbeBindAddress: o.HealthProbeBindAddress,
		MetricsBindAddress:     o.MetricsBindAddress,
		Metrics:                o.Metrics,
	}, nil
}
