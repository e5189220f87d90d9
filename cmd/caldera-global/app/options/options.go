// Package options holds caldera-global's flags and turns them into its
// configuration.
package options

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/component/metricsserving"
	dispatchcontroller "github.com/caldera-sh/caldera/pkg/federation/dispatch/controller"
	"github.com/caldera-sh/caldera/pkg/webhooks/serving"
)

// Options are caldera-global's flags.
type Options struct {
	// Kubeconfig reaches the Karmada API server.
	Kubeconfig string
	// Options are the webhook server's.
	serving.Options
	// StarvationWait is how long a job may be passed over before it
	// reserves capacity; 0 never.
	StarvationWait time.Duration
	// Coalesce gathers changes before deciding; Heartbeat re-decides at
	// least this often.
	Coalesce  time.Duration
	Heartbeat time.Duration
	// ReportGrace: how long a released job's pods are counted by the
	// dispatcher itself after they appear in their member.
	ReportGrace time.Duration
	// ApplyFailureGrace: how long a released job's member may refuse to
	// apply it before it stops counting against its queue and the member.
	ApplyFailureGrace time.Duration
	// HyperJobStartTimeout is how long a HyperJob's released children may
	// take to run before all are rolled back and it is planned again.
	HyperJobStartTimeout time.Duration
	// MemberLostAfter is how long a member may be NotReady before the
	// HyperJob children on it are lost with it; 0 never.
	MemberLostAfter time.Duration
	// DataProviders map data systems to the URL of a catalog speaking the
	// HTTP lookup contract (pkg/datadep.HTTP), as system=URL.
	DataProviders []string
	// ClusterInventory is where the member clusters come from: "karmada"
	// (Karmada's Clusters) or "cluster-api" (a Cluster API management
	// cluster's Clusters, measured directly).
	ClusterInventory string
	// ClusterAPIKubeconfig reaches the Cluster API management cluster;
	// empty means the Karmada API server's configuration.
	ClusterAPIKubeconfig string
	// ClusterAPINamespace limits the Cluster API Clusters read; empty
	// reads every namespace.
	ClusterAPINamespace string
	// PoolLabels are the node labels (accelerator models) the members'
	// nodes are grouped by, so a HyperJob selecting a model counts only
	// the free capacity of the nodes that have it.
	PoolLabels []string
	// MemberNodePools follows the nodes and pods of Karmada's Push-mode
	// members (their Cluster's apiEndpoint and secretRef) for their node
	// pools. The Cluster API inventory always follows its members.
	MemberNodePools bool
	// LeaderElect runs one dispatcher among the replicas; every replica
	// serves the webhook.
	LeaderElect             bool
	LeaderElectionNamespace string
	HealthProbeBindAddress  string
	MetricsBindAddress      string
	// Metrics say how MetricsBindAddress is served.
	Metrics metricsserving.Options

	// dataProviders are DataProviders parsed by Complete, system → URL.
	dataProviders map[string]string
}

// Config is what caldera-global runs with.
type Config struct {
	// Kubeconfig reaches the Karmada API server; empty means in-cluster.
	Kubeconfig string
	// Serving are the webhook server's options, completed.
	Serving serving.Options
	// Dispatcher are the dispatcher's timings; Run adds its inventory and
	// metrics.
	Dispatcher dispatchcontroller.Options
	// HyperJobStartTimeout is how long a HyperJob's released children may
	// take to run before all are rolled back and it is planned again.
	HyperJobStartTimeout time.Duration
	// MemberLostAfter is how long a member may be NotReady before the
	// HyperJob children on it are lost with it; 0 never.
	MemberLostAfter time.Duration
	// DataProviders map data systems to the URL of their catalog.
	DataProviders map[string]string
	// ClusterInventory is where the member clusters come from:
	// InventoryKarmada or InventoryClusterAPI.
	ClusterInventory string
	// ClusterAPIKubeconfig reaches the Cluster API management cluster;
	// empty means the Karmada API server's configuration.
	ClusterAPIKubeconfig string
	// ClusterAPINamespace limits the Cluster API Clusters read; empty
	// reads every namespace.
	ClusterAPINamespace string
	// PoolLabels are the node labels the members' nodes are grouped by.
	PoolLabels []string
	// MemberNodePools follows the nodes and pods of Karmada's Push-mode
	// members for their node pools.
	MemberNodePools bool
	// LeaderElect runs one dispatcher among the replicas, whose Lease is
	// in LeaderElectionNamespace.
	LeaderElect             bool
	LeaderElectionNamespace string
	// HealthProbeBindAddress and MetricsBindAddress serve /healthz and
	// /readyz, and /metrics; "0" turns them off.
	HealthProbeBindAddress string
	MetricsBindAddress     string
	// Metrics say how MetricsBindAddress is served.
	Metrics metricsserving.Options
}

// Cluster inventories.
const (
	InventoryKarmada    = "karmada"
	InventoryClusterAPI = "cluster-api"
)

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Options:                 serving.NewOptions("caldera-global"),
		StarvationWait:          10 * time.Minute,
		Coalesce:                50 * time.Millisecond,
		Heartbeat:               30 * time.Second,
		ReportGrace:             30 * time.Second,
		ApplyFailureGrace:       2 * time.Minute,
		ClusterInventory:        InventoryKarmada,
		PoolLabels:              []string{"nvidia.com/gpu.product", "cloud.google.com/gke-accelerator"},
		MemberNodePools:         true,
		HyperJobStartTimeout:    10 * time.Minute,
		MemberLostAfter:         5 * time.Minute,
		LeaderElect:             true,
		LeaderElectionNamespace: "caldera-system",
		HealthProbeBindAddress:  ":11256",
		MetricsBindAddress:      "0",
		Metrics:                 metricsserving.NewOptions(),
	}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the Karmada API server; empty means in-cluster configuration")
	o.Options.AddFlags(fs)
	fs.DurationVar(&o.StarvationWait, "starvation-wait", o.StarvationWait, "how long a job that does not fit may be passed over before it reserves the cluster closest to holding it; 0 never")
	fs.DurationVar(&o.Coalesce, "coalesce", o.Coalesce, "how long the dispatcher gathers changes before deciding")
	fs.DurationVar(&o.Heartbeat, "heartbeat", o.Heartbeat, "the dispatcher decides at least this often")
	fs.DurationVar(&o.ApplyFailureGrace, "apply-failure-grace", o.ApplyFailureGrace, "how long a released job's member may refuse to apply it (Karmada retries) before the job stops counting against its queue and the member; the job is told why")
	fs.DurationVar(&o.ReportGrace, "report-grace", o.ReportGrace, "how long after a released job's pods appear in their member the dispatcher still counts them itself before trusting the member's resource summary; at least Karmada's cluster status update period")
	fs.DurationVar(&o.HyperJobStartTimeout, "hyperjob-start-timeout", o.HyperJobStartTimeout, "how long the released children of a HyperJob may take to run (at least its minAvailable of them) before all are deleted and it is planned again")
	fs.DurationVar(&o.MemberLostAfter, "member-lost-after", o.MemberLostAfter, "how long a member cluster may be NotReady before the HyperJob children on it that have not finished are lost with it: each counts as a failed child and the HyperJob's failure policy decides (RestartChild then restarts every child); 0 never")
	fs.StringArrayVar(&o.DataProviders, "data-provider", o.DataProviders, "system=URL: DataSourceClaims of this data system are resolved by the catalog at URL, over the HTTP lookup contract (repeat for several systems); claims of other systems are resolved from the DataSources declared")
	fs.StringVar(&o.ClusterInventory, "cluster-inventory", o.ClusterInventory, "where the member clusters come from: karmada (Karmada's Clusters and their resource summaries) or cluster-api (the Clusters of a Cluster API management cluster, reached with their kubeconfig Secrets and measured directly; each must be joined to Karmada under its name)")
	fs.StringVar(&o.ClusterAPIKubeconfig, "cluster-api-kubeconfig", o.ClusterAPIKubeconfig, "kubeconfig of the Cluster API management cluster; empty means the Karmada API server's")
	fs.StringVar(&o.ClusterAPINamespace, "cluster-api-namespace", o.ClusterAPINamespace, "namespace of the Cluster API Clusters to read; empty reads all")
	fs.StringSliceVar(&o.PoolLabels, "pool-labels", o.PoolLabels, "node labels that name an accelerator model: the members' nodes are grouped by them, and a HyperJob whose pods select one of them counts only the free capacity of the nodes that match")
	fs.BoolVar(&o.MemberNodePools, "member-node-pools", o.MemberNodePools, "follow the nodes and pods of Karmada's Push-mode members, reached at their Cluster's spec.apiEndpoint with the token of its spec.secretRef, for their node pools; without it (and for Pull-mode members) a HyperJob's node selector is matched against the Karmada Clusters' labels")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "run the dispatcher in one replica at a time")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election Lease")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address of /healthz and /readyz; 0 turns them off")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of /metrics; 0 turns it off")
	o.Metrics.AddFlags(fs)
}

// Complete fills in the server's flags that depend on others and parses
// --data-provider; Validate reports what does not parse.
func (o *Options) Complete() error {
	o.Options.Complete()
	o.dataProviders, _ = parseDataProviders(o.DataProviders)
	return nil
}

// Validate checks the options.
func (o *Options) Validate() field.ErrorList {
	errs := o.Options.Validate()
	for _, d := range []struct {
		flag     string
		value    time.Duration
		positive bool
	}{
		{"--starvation-wait", o.StarvationWait, false},
		{"--coalesce", o.Coalesce, true},
		{"--heartbeat", o.Heartbeat, true},
		{"--apply-failure-grace", o.ApplyFailureGrace, false},
		{"--report-grace", o.ReportGrace, false},
		{"--hyperjob-start-timeout", o.HyperJobStartTimeout, true},
		{"--member-lost-after", o.MemberLostAfter, false},
	} {
		switch {
		case d.positive && d.value <= 0:
			errs = append(errs, field.Invalid(field.NewPath(d.flag), d.value.String(), "must be positive"))
		case d.value < 0:
			errs = append(errs, field.Invalid(field.NewPath(d.flag), d.value.String(), "must not be negative"))
		}
	}
	_, providerErrs := parseDataProviders(o.DataProviders)
	errs = append(errs, providerErrs...)
	switch o.ClusterInventory {
	case InventoryKarmada:
		if o.ClusterAPIKubeconfig != "" {
			errs = append(errs, field.Forbidden(field.NewPath("--cluster-api-kubeconfig"), "needs --cluster-inventory="+InventoryClusterAPI))
		}
		if o.ClusterAPINamespace != "" {
			errs = append(errs, field.Forbidden(field.NewPath("--cluster-api-namespace"), "needs --cluster-inventory="+InventoryClusterAPI))
		}
	case InventoryClusterAPI:
		if o.ClusterAPINamespace != "" {
			for _, msg := range validation.IsDNS1123Label(o.ClusterAPINamespace) {
				errs = append(errs, field.Invalid(field.NewPath("--cluster-api-namespace"), o.ClusterAPINamespace, msg))
			}
		}
	default:
		errs = append(errs, field.NotSupported(field.NewPath("--cluster-inventory"), o.ClusterInventory, []string{InventoryKarmada, InventoryClusterAPI}))
	}
	for _, l := range o.PoolLabels {
		for _, msg := range validation.IsQualifiedName(l) {
			errs = append(errs, field.Invalid(field.NewPath("--pool-labels"), l, msg))
		}
	}
	if o.LeaderElect {
		for _, msg := range validation.IsDNS1123Label(o.LeaderElectionNamespace) {
			errs = append(errs, field.Invalid(field.NewPath("--leader-election-namespace"), o.LeaderElectionNamespace, msg))
		}
	}
	errs = append(errs, o.Metrics.Validate(o.MetricsBindAddress)...)
	return errs
}

// Config returns caldera-global's configuration.
func (o *Options) Config() (*Config, error) {
	if o.dataProviders == nil {
		return nil, errors.New("the options are not completed: Complete parses --data-provider")
	}
	return &Config{
		Kubeconfig: o.Kubeconfig,
		Serving:    o.Options,
		Dispatcher: dispatchcontroller.Options{
			StarvationWait:    o.StarvationWait,
			Coalesce:          o.Coalesce,
			Heartbeat:         o.Heartbeat,
			ReportGrace:       o.ReportGrace,
			ApplyFailureGrace: o.ApplyFailureGrace,
		},
		HyperJobStartTimeout:    o.HyperJobStartTimeout,
		MemberLostAfter:         o.MemberLostAfter,
		DataProviders:           o.dataProviders,
		ClusterInventory:        o.ClusterInventory,
		ClusterAPIKubeconfig:    o.ClusterAPIKubeconfig,
		ClusterAPINamespace:     o.ClusterAPINamespace,
		PoolLabels:              o.PoolLabels,
		MemberNodePools:         o.MemberNodePools,
		LeaderElect:             o.LeaderElect,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		MetricsBindAddress:      o.MetricsBindAddress,
		Metrics:                 o.Metrics,
	}, nil
}

// parseDataProviders reads --data-provider into system → URL, with an
// error for each entry that is not system=URL or names a system again.
func parseDataProviders(list []string) (map[string]string, field.ErrorList) {
	path := field.NewPath("--data-provider")
	out := map[string]string{}
	var errs field.ErrorList
	for _, p := range list {
		system, raw, ok := strings.Cut(p, "=")
		if !ok || system == "" {
			errs = append(errs, field.Invalid(path, p, "must be system=URL"))
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, field.Invalid(path, p, "the URL must be http or https with a host"))
			continue
		}
		if _, dup := out[system]; dup {
			errs = append(errs, field.Invalid(path, p, fmt.Sprintf("system %q is given twice", system)))
			continue
		}
		out[system] = raw
	}
	return out, errs
}
