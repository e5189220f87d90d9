// Package options holds caldera-agent's flags and turns them into its
// configuration.
package options

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/agent"
	"github.com/caldera-sh/caldera/pkg/agent/cgroup"
	"github.com/caldera-sh/caldera/pkg/component/metricsserving"
)

// DefaultNamespace holds the colocation ConfigMap when neither --namespace
// nor $POD_NAMESPACE says otherwise.
const DefaultNamespace = "caldera-system"

// Options are the agent's flags.
type Options struct {
	Kubeconfig string
	// NodeName is the node the agent runs on; $NODE_NAME by default.
	NodeName string
	// Namespace holds the colocation ConfigMap; $POD_NAMESPACE by default.
	Namespace string
	// CgroupRoot is where the cgroup v2 hierarchy is mounted.
	CgroupRoot string
	// CgroupDriver is the kubelet's cgroup driver.
	CgroupDriver string
	// KubeletCgroupRoot is the kubelet's --cgroup-root.
	KubeletCgroupRoot string
	// MemInfo is the node's /proc/meminfo.
	MemInfo  string
	Interval time.Duration
	Resync   time.Duration
	// MetricsBindAddress serves /metrics; "0" turns it off.
	MetricsBindAddress string
	// Metrics say how it is served.
	Metrics metricsserving.Options
	// HealthProbeBindAddress serves /healthz over plain HTTP; "0" turns
	// it off.
	HealthProbeBindAddress string
	// NUMATopology publishes the node's Numatopology from SysFS,
	// KubeletConfig and CPUManagerState.
	NUMATopology    bool
	SysFS           string
	KubeletConfig   string
	CPUManagerState string
	// UsageReportInterval is how often the node's NodeUsage is published,
	// averaged over UsageWindow; 0 turns it off.
	UsageReportInterval time.Duration
	UsageWindow         time.Duration

	// flags are those AddFlags registered, for Complete to tell a flag
	// given from its default.
	flags *pflag.FlagSet
}

// Config is what the agent runs with.
type Config struct {
	// Kubeconfig reaches the API server; empty means in-cluster.
	Kubeconfig string
	// MetricsBindAddress serves /metrics; "0" turns it off.
	MetricsBindAddress string
	// Metrics say how it is served.
	Metrics metricsserving.Options
	// HealthProbeBindAddress serves /healthz; "0" turns it off.
	HealthProbeBindAddress string
	// Agent is the agent's loop on its node.
	Agent agent.Options
	// NUMA says where the node's NUMA topology is read from; nil: it is
	// not published.
	NUMA *NUMASources
	// Usage says how the node's NodeUsage is published; nil: it is not.
	Usage *UsageReporting
}

// UsageReporting is how often the node's NodeUsage is published, and the
// window its averages cover.
type UsageReporting struct {
	Interval, Window time.Duration
}

// NUMASources are the files the node's Numatopology is made from.
type NUMASources struct {
	SysFS, KubeletConfig, CPUManagerState string
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Namespace:              DefaultNamespace,
		CgroupRoot:             "/sys/fs/cgroup",
		CgroupDriver:           string(cgroup.Systemd),
		MemInfo:                "/proc/meminfo",
		Interval:               10 * time.Second,
		Resync:                 time.Minute,
		MetricsBindAddress:     ":8090",
		Metrics:                metricsserving.NewOptions(),
		HealthProbeBindAddress: ":8091",
		SysFS:                  "/sys",
		KubeletConfig:          "/var/lib/kubelet/config.yaml",
		CPUManagerState:        "/var/lib/kubelet/cpu_manager_state",
		UsageReportInterval:    time.Minute,
		UsageWindow:            5 * time.Minute,
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.flags = fs
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file; empty means in-cluster configuration")
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "the node the agent runs on (default $NODE_NAME)")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "namespace of the ConfigMap volcano-agent-configuration (default $POD_NAMESPACE, else caldera-system)")
	fs.StringVar(&o.CgroupRoot, "cgroup-root", o.CgroupRoot, "where the cgroup v2 hierarchy is mounted")
	fs.StringVar(&o.CgroupDriver, "cgroup-driver", o.CgroupDriver, "the kubelet's cgroup driver: systemd or cgroupfs")
	fs.StringVar(&o.KubeletCgroupRoot, "kubelet-cgroup-root", o.KubeletCgroupRoot, "the kubelet's --cgroup-root, if it sets one")
	fs.StringVar(&o.MemInfo, "meminfo", o.MemInfo, "the node's meminfo file")
	fs.DurationVar(&o.Interval, "interval", o.Interval, "time between readings of the node")
	fs.DurationVar(&o.Resync, "resync", o.Resync, "how often batch resources are published even when they moved by less than a tenth")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address /metrics is served on; 0 turns it off")
	o.Metrics.AddFlags(fs)
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address /healthz is served on, over plain HTTP; 0 turns it off")
	fs.BoolVar(&o.NUMATopology, "numa-topology", o.NUMATopology, "publish the node's Numatopology (nodeinfo.volcano.sh), which the scheduler's numa-aware plugin places pods by, every interval")
	fs.StringVar(&o.SysFS, "sysfs", o.SysFS, "where sysfs is mounted: the CPUs' topology is read from it (with --numa-topology)")
	fs.StringVar(&o.KubeletConfig, "kubelet-config", o.KubeletConfig, "the kubelet's configuration file: its CPU and topology manager policies and reserved CPUs (with --numa-topology; missing: the kubelet's defaults)")
	fs.DurationVar(&o.UsageReportInterval, "usage-report-interval", o.UsageReportInterval, "how often the node's NodeUsage (metrics.caldera.sh), which the scheduler's usage plugin and the load-aware descheduler read, is published; 0 turns it off")
	fs.DurationVar(&o.UsageWindow, "usage-window", o.UsageWindow, "the span of readings the NodeUsage averages cover")
	fs.StringVar(&o.CPUManagerState, "cpu-manager-state", o.CPUManagerState, "the kubelet's CPU manager checkpoint: the CPUs containers hold (with --numa-topology; missing: none)")
}

// Complete takes the node and the namespace from the pod's environment
// ($NODE_NAME, $POD_NAMESPACE) where the flags leave them to it.
func (o *Options) Complete() error {
	if o.NodeName == "" {
		o.NodeName = os.Getenv("NODE_NAME")
	}
	namespaceGiven := o.flags != nil && o.flags.Changed("namespace")
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" && !namespaceGiven && o.Namespace == DefaultNamespace {
		o.Namespace = ns
	}
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() field.ErrorList {
	var errs field.ErrorList
	if o.NodeName == "" {
		errs = append(errs, field.Required(field.NewPath("--node-name"), "give it or set $NODE_NAME"))
	}
	if o.Namespace == "" {
		errs = append(errs, field.Required(field.NewPath("--namespace"), ""))
	}
	if _, err := cgroup.ParseDriver(o.CgroupDriver); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("--cgroup-driver"), o.CgroupDriver, "must be systemd or cgroupfs"))
	}
	if o.Interval <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("--interval"), o.Interval.String(), "must be positive"))
	}
	if o.Resync < 0 {
		errs = append(errs, field.Invalid(field.NewPath("--resync"), o.Resync.String(), "must not be negative"))
	}
	if o.UsageReportInterval < 0 {
		errs = append(errs, field.Invalid(field.NewPath("--usage-report-interval"), o.UsageReportInterval.String(), "must not be negative (0 turns the report off)"))
	}
	if o.UsageReportInterval > 0 && o.UsageWindow < o.Interval {
		errs = append(errs, field.Invalid(field.NewPath("--usage-window"), o.UsageWindow.String(), fmt.Sprintf("must be at least --interval (%s): the window averages readings", o.Interval)))
	}
	if o.NUMATopology && o.SysFS == "" {
		errs = append(errs, field.Required(field.NewPath("--sysfs"), "the CPUs' topology is read from it with --numa-topology"))
	}
	errs = append(errs, o.Metrics.Validate(o.MetricsBindAddress)...)
	if !metricsserving.Off(o.HealthProbeBindAddress) {
		if o.HealthProbeBindAddress == o.MetricsBindAddress {
			errs = append(errs, field.Invalid(field.NewPath("--health-probe-bind-address"), o.HealthProbeBindAddress, "must differ from --metrics-bind-address"))
		}
	}
	return errs
}

// Config returns the agent's configuration.
func (o *Options) Config() (*Config, error) {
	driver, err := cgroup.ParseDriver(o.CgroupDriver)
	if err != nil {
		return nil, fmt.Errorf("--cgroup-driver: %w", err)
	}
	var numa *NUMASources
	if o.NUMATopology {
		numa = &NUMASources{SysFS: o.SysFS, KubeletConfig: o.KubeletConfig, CPUManagerState: o.CPUManagerState}
	}
	var use *UsageReporting
	if o.UsageReportInterval > 0 {
		use = &UsageReporting{Interval: o.UsageReportInterval, Window: o.UsageWindow}
	}
	return &Config{
		NUMA:                   numa,
		Usage:                  use,
		Kubeconfig:             o.Kubeconfig,
		MetricsBindAddress:     o.MetricsBindAddress,
		Metrics:                o.Metrics,
		HealthProbeBindAddress: o.HealthProbeBindAddress,
		Agent: agent.Options{
			NodeName:  o.NodeName,
			Namespace: o.Namespace,
			Layout:    cgroup.Layout{Root: o.CgroupRoot, Driver: driver, KubeletRoot: o.KubeletCgroupRoot},
			MemInfo:   o.MemInfo,
			Interval:  o.Interval,
			Resync:    o.Resync,
		},
	}, nil
}
