package v1alpha1

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults that other packages refer to.
const (
	// DefaultSchedulerName is the scheduler name served when none is
	// configured: Volcano's, so that Volcano workloads are served as is.
	DefaultSchedulerName = "volcano"
	// DefaultLeaseName is the default name of the leader election Lease.
	DefaultLeaseName = "caldera-scheduler"
	// DefaultLeaseNamespace is the default namespace of that Lease.
	DefaultLeaseNamespace = "kube-system"
	// DefaultHealthzBindAddress is Volcano's health port.
	DefaultHealthzBindAddress = ":11251"
	// DefaultMetricsBindAddress is Volcano's metrics port.
	DefaultMetricsBindAddress = ":8080"
)

// DefaultActions returns the actions run when none are configured.
func DefaultActions() []string {
	return []string{EnqueueAction, AllocateAction, BackfillAction}
}

// DefaultTiers returns the tiers used when none are configured: the
// configuration Volcano's scheduler falls back to without a file.
func DefaultTiers() []Tier {
	return []Tier{
		{Plugins: []PluginConfig{{Name: PriorityPlugin}, {Name: GangPlugin}, {Name: ConformancePlugin}}},
		{Plugins: []PluginConfig{{Name: OvercommitPlugin}, {Name: DRFPlugin}, {Name: PredicatesPlugin}, {Name: ProportionPlugin}, {Name: NodeOrderPlugin}}},
	}
}

func setString(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

// SetDefaults_SchedulerConfiguration fills in every unset field. It is
// idempotent. Typed plugin arguments are decoded, defaulted and encoded back,
// so that the configuration shows the values in effect; arguments that do
// not decode are left as they are for validation to report.
func SetDefaults_SchedulerConfiguration(cfg *SchedulerConfiguration) {
	cfg.APIVersion = SchemeGroupVersion.String()
	cfg.Kind = Kind
	if len(cfg.SchedulerNames) == 0 {
		cfg.SchedulerNames = []string{DefaultSchedulerName}
	}
	if len(cfg.Actions) == 0 {
		cfg.Actions = DefaultActions()
	}
	if len(cfg.Tiers) == 0 {
		cfg.Tiers = DefaultTiers()
	}
	for i := range cfg.Tiers {
		for j := range cfg.Tiers[i].Plugins {
			defaultPluginArgs(&cfg.Tiers[i].Plugins[j])
		}
	}

	p := &cfg.Preemption
	setBool(&p.TopologyAware, false)
	setInt32(&p.Workers, 16)
	setInt32(&p.MinCandidateNodesPercentage, 10)
	setInt32(&p.MinCandidateNodesAbsolute, 100)
	setInt32(&p.MaxCandidateNodesAbsolute, max(100, *p.MinCandidateNodesAbsolute))

	setDuration(&cfg.Cycle.CoalesceWindow, metav1.Duration{Duration: 10 * time.Millisecond})
	setDuration(&cfg.Cycle.Heartbeat, metav1.Duration{Duration: time.Second})
	setDuration(&cfg.Cycle.MaxDuration, metav1.Duration{Duration: time.Second})

	setInt32(&cfg.Binder.Concurrency, 64)
	setDuration(&cfg.Binder.Timeout, metav1.Duration{Duration: 30 * time.Second})

	setString(&cfg.Sharding.Mode, ShardingNone)
	setInt32(&cfg.FastLane.Workers, 2)

	setInt32(&cfg.NodeSampling.PercentageOfNodesToFind, 0)
	setInt32(&cfg.NodeSampling.MinNodesToFind, 100)

	if m := cfg.MetricsSource; m != nil {
		setString(&m.Type, MetricsSourcePrometheus)
		setDuration(&m.Interval, metav1.Duration{Duration: 30 * time.Second})
	}

	c := &cfg.ClientConnection
	setString(&c.ContentType, "application/vnd.kubernetes.protobuf")
	if c.QPS == nil {
		c.QPS = new(float32(200))
	}
	setInt32(&c.Burst, 400)

	le := &cfg.LeaderElection
	setBool(&le.LeaderElect, true)
	setDuration(&le.LeaseDuration, metav1.Duration{Duration: 15 * time.Second})
	setDuration(&le.RenewDeadline, metav1.Duration{Duration: 10 * time.Second})
	setDuration(&le.RetryPeriod, metav1.Duration{Duration: 2 * time.Second})
	setString(&le.ResourceLock, LeasesResourceLock)
	setString(&le.ResourceName, DefaultLeaseName)
	setString(&le.ResourceNamespace, DefaultLeaseNamespace)

	setString(&cfg.HealthzBindAddress, DefaultHealthzBindAddress)
	setString(&cfg.MetricsBindAddress, DefaultMetricsBindAddress)
	setBool(&cfg.EnableProfiling, false)
}

// defaultPluginArgs rewrites a plugin's typed arguments with their defaults.
func defaultPluginArgs(p *PluginConfig) {
	args, errs := DecodePluginArgs(p, nil)
	if args == nil || len(errs) > 0 {
		return
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return
	}
	p.Args.Raw = raw
	p.Args.Object = nil
}
