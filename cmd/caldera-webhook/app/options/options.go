// Package options holds caldera-webhook's flags.
package options

import (
	"errors"

	"github.com/spf13/pflag"

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
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Options:                serving.NewOptions("caldera-webhook"),
		SchedulerNames:         []string{"volcano"},
		HealthProbeBindAddress: ":11254",
		MetricsBindAddress:     "0",
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file; empty means in-cluster configuration")
	o.Options.AddFlags(fs)
	fs.StringSliceVar(&o.SchedulerNames, "scheduler-name", o.SchedulerNames, "schedulers whose pods are checked (repeatable)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address of /healthz and /readyz; 0 turns them off")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of /metrics (request counts and latencies per webhook); 0 turns it off")
}

// Validate checks the options.
func (o *Options) Validate() error {
	errs := o.Options.Validate()
	if len(o.SchedulerNames) == 0 {
		errs = append(errs, errors.New("--scheduler-name: at least one is required"))
	}
	return errors.Join(errs...)
}
