// Package options holds caldera-scheduler's command-line flags and turns
// them, with the configuration file, into a validated configuration.
package options

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/caldera-sh/caldera/pkg/scheduler/apis/config"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/apis/config/v1alpha1"
)

// Options are the scheduler's flags. Everything else is in the
// configuration file; flags that are set override it.
type Options struct {
	// ConfigFile is a SchedulerConfiguration or a Volcano
	// volcano-scheduler.conf.
	ConfigFile string
	Kubeconfig string
	Master     string
	// SchedulerNames, when set, replace the configuration's.
	SchedulerNames []string
	// LeaderElect overrides the configuration when the flag is given.
	LeaderElect    bool
	leaderElectSet bool
	// LeaderElectionNamespace, when set, is the Lease's namespace.
	LeaderElectionNamespace string
	HealthzBindAddress      string
	MetricsBindAddress      string
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "config", "", "scheduler configuration file: a SchedulerConfiguration (scheduler.config.caldera.sh/v1alpha1) or a Volcano volcano-scheduler.conf; empty means the defaults")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file; empty means in-cluster configuration")
	fs.StringVar(&o.Master, "master", "", "API server address, overriding the kubeconfig's")
	fs.StringSliceVar(&o.SchedulerNames, "scheduler-name", nil, "schedulerName values of the pods to schedule (repeatable); overrides the configuration")
	fs.BoolVar(&o.LeaderElect, "leader-elect", true, "elect a leader among replicas before scheduling; overrides the configuration when given")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease; overrides the configuration's leaderElection.resourceNamespace (default kube-system)")
	fs.StringVar(&o.HealthzBindAddress, "healthz-bind-address", "", "address of /healthz and /readyz; overrides the configuration")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", "", "address of /metrics (and /debug/pprof when profiling is on); overrides the configuration")
}

// Config loads the configuration and applies the flags that were set.
func (o *Options) Config(fs *pflag.FlagSet, reg configv1alpha1.Registry) (*configv1alpha1.SchedulerConfiguration, error) {
	o.leaderElectSet = fs.Changed("leader-elect")
	var cfg *configv1alpha1.SchedulerConfiguration
	var err error
	if o.ConfigFile != "" {
		cfg, err = config.LoadFile(o.ConfigFile, reg)
	} else {
		cfg, err = config.Load([]byte("apiVersion: scheduler.config.caldera.sh/v1alpha1\nkind: SchedulerConfiguration\n"), reg)
	}
	if err != nil {
		return nil, err
	}
	if len(o.SchedulerNames) > 0 {
		cfg.SchedulerNames = o.SchedulerNames
	}
	if o.leaderElectSet {
		v := o.LeaderElect
		cfg.LeaderElection.LeaderElect = &v
	}
	if o.LeaderElectionNamespace != "" {
		cfg.LeaderElection.ResourceNamespace = o.LeaderElectionNamespace
	}
	if o.Kubeconfig != "" {
		cfg.ClientConnection.Kubeconfig = o.Kubeconfig
	}
	if o.HealthzBindAddress != "" {
		cfg.HealthzBindAddress = o.HealthzBindAddress
	}
	if o.MetricsBindAddress != "" {
		cfg.MetricsBindAddress = o.MetricsBindAddress
	}
	if len(cfg.SchedulerNames) == 0 {
		return nil, fmt.Errorf("schedulerNames: at least one scheduler name is required")
	}
	return cfg, nil
}
