// Package options holds caldera-scheduler's command-line flags and turns
// them, with the configuration file, into a validated configuration.
package options

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/component/metricsserving"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
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
	// ShardingMode and ShardingName, when set, replace the configuration's
	// sharding.mode and sharding.shardName.
	ShardingMode string
	ShardingName string
	// LeaderElect overrides the configuration when the flag is given.
	LeaderElect bool
	// LeaderElectionNamespace, when set, is the Lease's namespace.
	LeaderElectionNamespace string
	HealthzBindAddress      string
	MetricsBindAddress      string
	// Metrics say how the metrics address is served.
	Metrics metricsserving.Options

	// plugins are the plugins and actions the configuration may name.
	plugins configv1alpha1.Registry
	// flags are those AddFlags registered, for Complete to tell a flag
	// given from its default.
	flags *pflag.FlagSet
	// configuration is the file's, with the flags applied, once Complete
	// has loaded it.
	configuration *configv1alpha1.SchedulerConfiguration
}

// Config is what the scheduler runs with.
type Config struct {
	// Configuration is the configuration file's (or the defaults), with
	// the flags that were given applied.
	Configuration *configv1alpha1.SchedulerConfiguration
	// Master, when set, overrides the kubeconfig's API server address.
	Master string
	// Metrics say how the metrics address is served.
	Metrics metricsserving.Options
}

// NewOptions returns the defaults for a scheduler whose configuration may
// name the plugins and actions in plugins.
func NewOptions(plugins configv1alpha1.Registry) *Options {
	return &Options{LeaderElect: true, Metrics: metricsserving.NewOptions(), plugins: plugins}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.flags = fs
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "scheduler configuration file: a SchedulerConfiguration (scheduler.config.caldera.sh/v1alpha1) or a Volcano volcano-scheduler.conf; empty means the defaults")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file; empty means in-cluster configuration")
	fs.StringVar(&o.Master, "master", o.Master, "API server address, overriding the kubeconfig's")
	fs.StringSliceVar(&o.SchedulerNames, "scheduler-name", o.SchedulerNames, "schedulerName values of the pods to schedule (repeatable); overrides the configuration")
	fs.StringVar(&o.ShardingMode, "scheduler-sharding-mode", o.ShardingMode, "how this instance uses its NodeShard: none (every node), soft (its nodes first) or hard (only its nodes); overrides the configuration's sharding.mode (default none)")
	fs.StringVar(&o.ShardingName, "scheduler-sharding-name", o.ShardingName, "name of this instance's NodeShard; overrides the configuration's sharding.shardName (default the first scheduler name)")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "elect a leader among replicas before scheduling; overrides the configuration when given")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election Lease; overrides the configuration's leaderElection.resourceNamespace (default kube-system)")
	fs.StringVar(&o.HealthzBindAddress, "healthz-bind-address", o.HealthzBindAddress, "address of /healthz and /readyz; overrides the configuration")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of /metrics, /debug/jobs/ and /debug/pprof (when profiling is on); overrides the configuration")
	o.Metrics.AddFlags(fs)
}

// Complete loads the configuration file (or the defaults) and applies the
// flags that were set.
func (o *Options) Complete() error {
	var cfg *configv1alpha1.SchedulerConfiguration
	var err error
	if o.ConfigFile != "" {
		cfg, err = config.LoadFile(o.ConfigFile, o.plugins)
	} else {
		cfg, err = config.Load([]byte("apiVersion: scheduler.config.caldera.sh/v1alpha1\nkind: SchedulerConfiguration\n"), o.plugins)
	}
	if err != nil {
		return err
	}
	if len(o.SchedulerNames) > 0 {
		cfg.SchedulerNames = o.SchedulerNames
	}
	if o.ShardingMode != "" {
		cfg.Sharding.Mode = o.ShardingMode
	}
	if o.ShardingName != "" {
		cfg.Sharding.ShardName = o.ShardingName
	}
	if o.flags != nil && o.flags.Changed("leader-elect") {
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
	o.configuration = cfg
	return nil
}

// Validate checks the configuration with the flags applied, by the
// configuration's own rules: the file was valid when Complete loaded it,
// so what fails now came from a flag, and the error names it.
func (o *Options) Validate() field.ErrorList {
	if o.configuration == nil {
		return field.ErrorList{field.InternalError(field.NewPath("--config"), errNotLoaded)}
	}
	errs := configv1alpha1.ValidateSchedulerConfiguration(o.configuration, o.plugins)
	for _, err := range errs {
		for _, set := range o.overrides() {
			if within(err.Field, set.field) {
				err.Field = set.flag
			}
		}
	}
	cfg := o.configuration
	if !metricsserving.Off(cfg.MetricsBindAddress) {
		errs = append(errs, o.Metrics.ValidateCertificate()...)
		if o.Metrics.Secure && cfg.MetricsBindAddress == cfg.HealthzBindAddress {
			errs = append(errs, field.Invalid(field.NewPath("--metrics-secure"), true,
				"metricsBindAddress equals healthzBindAddress ("+cfg.MetricsBindAddress+"): probes need plain HTTP and metrics are served over HTTPS, so give them different addresses (or --metrics-secure=false)"))
		}
	}
	return errs
}

// override is a configuration field set by a flag.
type override struct{ flag, field string }

// overrides are the configuration fields that Complete set from flags and
// that the configuration's validation checks.
func (o *Options) overrides() []override {
	var set []override
	if len(o.SchedulerNames) > 0 {
		set = append(set, override{"--scheduler-name", "schedulerNames"})
	}
	if o.ShardingMode != "" {
		set = append(set, override{"--scheduler-sharding-mode", "sharding.mode"})
	}
	if o.ShardingName != "" {
		set = append(set, override{"--scheduler-sharding-name", "sharding.shardName"})
	}
	if o.LeaderElectionNamespace != "" {
		set = append(set, override{"--leader-election-namespace", "leaderElection.resourceNamespace"})
	}
	if o.HealthzBindAddress != "" {
		set = append(set, override{"--healthz-bind-address", "healthzBindAddress"})
	}
	if o.MetricsBindAddress != "" {
		set = append(set, override{"--metrics-bind-address", "metricsBindAddress"})
	}
	return set
}

// within reports whether the field path is field or one of its elements.
func within(path, field string) bool {
	return path == field || strings.HasPrefix(path, field+"[") || strings.HasPrefix(path, field+".")
}

var errNotLoaded = errors.New("the configuration is not loaded; Complete loads it")

// Config returns the scheduler's configuration.
func (o *Options) Config() (*Config, error) {
	if o.configuration == nil {
		return nil, errNotLoaded
	}
	return &Config{Configuration: o.configuration, Master: o.Master, Metrics: o.Metrics}, nil
}
