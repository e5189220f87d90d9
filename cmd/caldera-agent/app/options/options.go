// Package options holds caldera-agent's flags.
package options

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/caldera-sh/caldera/pkg/agent/cgroup"
)

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
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = "caldera-system"
	}
	return &Options{
		NodeName:           os.Getenv("NODE_NAME"),
		Namespace:          ns,
		CgroupRoot:         "/sys/fs/cgroup",
		CgroupDriver:       string(cgroup.Systemd),
		MemInfo:            "/proc/meminfo",
		Interval:           10 * time.Second,
		Resync:             time.Minute,
		MetricsBindAddress: ":8090",
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
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
}

// Validate checks the flags.
func (o *Options) Validate() error {
	var errs []error
	if o.NodeName == "" {
		errs = append(errs, errors.New("--node-name: required (or set $NODE_NAME)"))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("--namespace: must not be empty"))
	}
	if _, err := cgroup.ParseDriver(o.CgroupDriver); err != nil {
		errs = append(errs, fmt.Errorf("--cgroup-driver: %w", err))
	}
	if o.Interval <= 0 {
		errs = append(errs, fmt.Errorf("--interval: %s must be positive", o.Interval))
	}
	if o.Resync < 0 {
		errs = append(errs, fmt.Errorf("--resync: %s must not be negative", o.Resync))
	}
	return errors.Join(errs...)
}
