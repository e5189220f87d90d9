package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SchedulerConfiguration configures caldera-scheduler. Every field is
// optional; SetDefaults_SchedulerConfiguration fills in what is left out and
// ValidateSchedulerConfiguration checks the result.
//
// +kubebuilder:object:root=true
type SchedulerConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// SchedulerNames lists the values of a pod's spec.schedulerName that this
	// scheduler serves. Pods naming any other scheduler are ignored.
	// Default ["volcano"], so that workloads written for Volcano are served
	// unchanged.
	// +optional
	// +listType=set
	SchedulerNames []string `json:"schedulerNames,omitempty"`

	// Actions are run in this order in every scheduling cycle. Known actions:
	// enqueue, allocate, backfill, preempt, reclaim, shuffle. Each may appear
	// once. Default [enqueue, allocate, backfill].
	// +optional
	// +listType=atomic
	Actions []string `json:"actions,omitempty"`

	// Tiers of plugins. Plugins in an earlier tier decide first: a later tier
	// is consulted only where the earlier ones abstain (as in Volcano). A
	// plugin may appear once across all tiers. Default: Volcano's built-in
	// tiers [priority, gang, conformance] and [overcommit, drf, predicates,
	// proportion, nodeorder].
	// +optional
	// +listType=atomic
	Tiers []Tier `json:"tiers,omitempty"`

	// Preemption tunes the preempt action.
	// +optional
	Preemption PreemptionConfiguration `json:"preemption,omitzero"`

	// Cycle sets when scheduling cycles run.
	// +optional
	Cycle CycleConfiguration `json:"cycle,omitzero"`

	// Binder tunes the asynchronous binder.
	// +optional
	Binder BinderConfiguration `json:"binder,omitzero"`

	// NodeSampling bounds how many feasible nodes are looked for before a
	// task is placed.
	// +optional
	NodeSampling NodeSamplingConfiguration `json:"nodeSampling,omitzero"`

	// Sharding is how this scheduler shares the cluster's nodes with other
	// scheduler instances through NodeShards (shard.volcano.sh/v1alpha1).
	// +optional
	Sharding ShardingConfiguration `json:"sharding,omitzero"`

	// FastLane places latency-sensitive single pods beside the scheduling
	// cycle: several workers, each deciding on a snapshot of its own, whose
	// placements are checked against the cluster as it is when they are
	// bound. Off unless it selects pods.
	// +optional
	FastLane FastLaneConfiguration `json:"fastLane,omitzero"`

	// MetricsSource is where node usage metrics are read from. Only the
	// usage plugin reads it. It is Volcano's top-level "metrics" section.
	// +optional
	MetricsSource *MetricsSourceConfiguration `json:"metricsSource,omitempty"`

	// ClientConnection configures the connection to the API server.
	// +optional
	ClientConnection ClientConnectionConfiguration `json:"clientConnection,omitzero"`

	// LeaderElection configures leader election among scheduler replicas.
	// +optional
	LeaderElection LeaderElectionConfiguration `json:"leaderElection,omitzero"`

	// HealthzBindAddress is the host:port serving /healthz and /readyz over
	// plain HTTP. Default ":11251", Volcano's health port, so probes written
	// for Volcano's scheduler keep working. Empty after defaulting is not
	// possible; set "0" to disable.
	// +optional
	HealthzBindAddress string `json:"healthzBindAddress,omitempty"`

	// MetricsBindAddress is the host:port serving /metrics, the scheduler's
	// explanations (/debug/jobs/) and /debug/pprof (when EnableProfiling
	// is set), over HTTPS to callers the API server authenticates and
	// authorizes unless the scheduler runs with --metrics-secure=false.
	// Default ":8080", Volcano's metrics port. Served insecurely, it may
	// equal HealthzBindAddress, and then one listener serves both. Set "0"
	// to disable.
	// +optional
	MetricsBindAddress string `json:"metricsBindAddress,omitempty"`

	// EnableProfiling serves Go's pprof handlers on MetricsBindAddress.
	// Default false.
	// +optional
	EnableProfiling *bool `json:"enableProfiling,omitempty"`
}

// ShardingConfiguration says which nodes this scheduler places pods on when
// several scheduler instances share a cluster. The instance reads its
// NodeShard's spec.nodesDesired and writes its status: a desired node joins
// only once no other instance lists it in use, and a node it no longer
// desires is released once its binds there are done.
type ShardingConfiguration struct {
	// Mode is "none" (default: every node; no NodeShard is read), "hard"
	// (only the NodeShard's nodes) or "soft" (the NodeShard's nodes first;
	// the others only for a pod none of them fits). Without a NodeShard of
	// its name, a hard or soft instance uses every node no other instance
	// lists in use.
	// +optional
	Mode string `json:"mode,omitempty"`

	// ShardName is the NodeShard's name. Default: the first of
	// schedulerNames.
	// +optional
	ShardName string `json:"shardName,omitempty"`
}

// FastLaneConfiguration selects the pods the fast lane places and sizes it.
// A pod goes to the fast lane when it names no PodGroup, its schedulerName
// is one of SchedulerNames or its queue (the scheduling.volcano.sh/queue-name
// annotation) one of Queues, and it needs nothing prepared before its bind
// (no PersistentVolumeClaims, generic ephemeral volumes or resource claims,
// no GPU sharing or vGPU). Other pods, a gang's among them, are placed by
// the scheduling cycle as usual.
type FastLaneConfiguration struct {
	// SchedulerNames are further schedulerName values this scheduler
	// serves, whose pods the fast lane places. They must not be in the
	// top-level schedulerNames.
	// +optional
	// +listType=set
	SchedulerNames []string `json:"schedulerNames,omitempty"`

	// Queues whose pods (of the scheduler's names, fast or not) the fast
	// lane places.
	// +optional
	// +listType=set
	Queues []string `json:"queues,omitempty"`

	// Workers is how many placement loops run in parallel, each with its own
	// copy of the cluster's state. Default 2.
	// +optional
	Workers *int32 `json:"workers,omitempty"`
}

// Enabled reports whether the fast lane selects any pod.
func (f *FastLaneConfiguration) Enabled() bool {
	return len(f.SchedulerNames) > 0 || len(f.Queues) > 0
}

// Sharding modes.
const (
	ShardingNone = "none"
	ShardingSoft = "soft"
	ShardingHard = "hard"
)

// Tier is a group of plugins of equal precedence.
type Tier struct {
	// Plugins of this tier, in order.
	// +listType=atomic
	Plugins []PluginConfig `json:"plugins"`
}

// CycleConfiguration sets when scheduling cycles run. A cycle starts when
// work is pending and something changed, after gathering further changes for
// CoalesceWindow; while work stays pending, a cycle runs at least every
// Heartbeat even if nothing changed (time-based policies such as SLA waiting
// times and retries need it).
type CycleConfiguration struct {
	// CoalesceWindow is how long events are gathered before a cycle starts.
	// Default 10ms. 0 starts a cycle on the first event.
	// +optional
	CoalesceWindow *metav1.Duration `json:"coalesceWindow,omitempty"`

	// Heartbeat is the longest time between two cycles while work is
	// pending. Default 1s. Must be positive and not below CoalesceWindow.
	// +optional
	Heartbeat *metav1.Duration `json:"heartbeat,omitempty"`

	// MaxDuration is how long a cycle goes on trying jobs: past it, the
	// jobs not yet tried wait for the next cycle, which starts at once on
	// the cluster as it then is (a job being tried is finished first). A
	// backlog is then placed in cycles of about this length rather than
	// one long cycle that neither sees what changed meanwhile nor lets go
	// of the objects it was started with. Default 1s. 0 means no limit.
	// +optional
	MaxDuration *metav1.Duration `json:"maxDuration,omitempty"`
}

// BinderConfiguration tunes the binder that posts pods/binding subresources
// for the allocations a cycle commits.
type BinderConfiguration struct {
	// Concurrency is the number of binding requests in flight at once.
	// Default 64. Must be at least 1.
	// +optional
	Concurrency *int32 `json:"concurrency,omitempty"`

	// Timeout bounds one binding request; a request that times out fails the
	// bind and rolls back its gang's allocation. Default 30s.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// NodeSamplingConfiguration bounds the search for feasible nodes, as
// kube-scheduler's percentageOfNodesToScore does. When placing a task,
// filtering stops once max(MinNodesToFind, PercentageOfNodesToFind% of all
// nodes) feasible nodes are found, starting where the previous search
// stopped, and the best of those is chosen. Clusters with fewer than
// MinNodesToFind nodes always have every node evaluated; 100 evaluates every
// node of any cluster, for the best placement at the cost of speed.
type NodeSamplingConfiguration struct {
	// PercentageOfNodesToFind is the share of all nodes, 0 to 100, that is
	// enough to stop looking. 0 means kube-scheduler's adaptive share: 50%
	// less 1% per 125 nodes, at least 5%. Default 0.
	// +optional
	PercentageOfNodesToFind *int32 `json:"percentageOfNodesToFind,omitempty"`

	// MinNodesToFind is the least number of feasible nodes looked for
	// whatever the percentage. Default 100. Must be at least 1.
	// +optional
	MinNodesToFind *int32 `json:"minNodesToFind,omitempty"`
}

// PreemptionConfiguration tunes the preempt and reclaim actions. The fields
// are Volcano's preempt action arguments.
//
// For each task that fits no node, preempt and reclaim look for nodes where
// evictions would make room, in turn from where the last search stopped,
// until they have found clamp(MinCandidateNodesPercentage% of the nodes,
// MinCandidateNodesAbsolute, MaxCandidateNodesAbsolute) such nodes (or seen
// every node), and take the best of those.
type PreemptionConfiguration struct {
	// TopologyAware simulates evictions on several candidate nodes in
	// parallel and keeps the best, instead of trying nodes one by one.
	// Volcano's enableTopologyAwarePreemption. Default false.
	// +optional
	TopologyAware *bool `json:"topologyAware,omitempty"`

	// Workers is the number of parallel simulations when TopologyAware is
	// set. Volcano's topologyAwarePreemptWorkerNum. Default 16, at least 1.
	// +optional
	Workers *int32 `json:"workers,omitempty"`

	// MinCandidateNodesPercentage is the share of nodes, 0 to 100, to find
	// as candidates for evictions before choosing. Volcano's
	// minCandidateNodesPercentage. Default 10.
	// +optional
	MinCandidateNodesPercentage *int32 `json:"minCandidateNodesPercentage,omitempty"`

	// MinCandidateNodesAbsolute is the least number of candidate nodes to
	// find. Volcano's minCandidateNodesAbsolute. Default 100, as
	// kube-scheduler's (Volcano's is 1, which takes the first node where
	// evictions would help), so that clusters of up to 100 nodes always get
	// the best choice. At least 1.
	// +optional
	MinCandidateNodesAbsolute *int32 `json:"minCandidateNodesAbsolute,omitempty"`

	// MaxCandidateNodesAbsolute is the most candidate nodes to find.
	// Volcano's maxCandidateNodesAbsolute. Default 100, or
	// MinCandidateNodesAbsolute when that is larger; at least
	// MinCandidateNodesAbsolute.
	// +optional
	MaxCandidateNodesAbsolute *int32 `json:"maxCandidateNodesAbsolute,omitempty"`
}

// MetricsSourceConfiguration is where node usage metrics come from.
type MetricsSourceConfiguration struct {
	// Type of the source: prometheus, prometheus_adaptor or elasticsearch.
	// Default prometheus.
	// +optional
	Type string `json:"type,omitempty"`

	// Address of the source, for example http://prometheus.monitoring:9090.
	// +required
	Address string `json:"address"`

	// Interval between two reads. Default 30s.
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// Metrics source types.
const (
	MetricsSourcePrometheus        = "prometheus"
	MetricsSourcePrometheusAdaptor = "prometheus_adaptor"
	MetricsSourceElasticsearch     = "elasticsearch"
)

// ClientConnectionConfiguration configures the API server client. The field
// names are those of Kubernetes' component-base ClientConnectionConfiguration.
type ClientConnectionConfiguration struct {
	// Kubeconfig is the path to a kubeconfig file. Empty uses the in-cluster
	// configuration (or the --kubeconfig flag).
	// +optional
	Kubeconfig string `json:"kubeconfig,omitempty"`

	// AcceptContentTypes is the Accept header sent to the API server.
	// Empty lets the client choose.
	// +optional
	AcceptContentTypes string `json:"acceptContentTypes,omitempty"`

	// ContentType of requests for built-in types (pods, nodes, bindings,
	// ...). Default application/vnd.kubernetes.protobuf, which is cheaper to
	// encode and decode than JSON; custom resources (PodGroups, Queues) are
	// always sent and read as JSON, the only form the API server serves them in.
	// +optional
	ContentType string `json:"contentType,omitempty"`

	// QPS is the sustained request rate to the API server. Default 200: a
	// batch scheduler binds whole gangs at once, and at kube-scheduler's 50
	// a 1,000-pod job would take 20 seconds to bind.
	// +optional
	QPS *float32 `json:"qps,omitempty"`

	// Burst is the request burst above QPS. Default 400.
	// +optional
	Burst *int32 `json:"burst,omitempty"`
}

// LeaderElectionConfiguration configures leader election. The field names
// are those of Kubernetes' component-base LeaderElectionConfiguration.
type LeaderElectionConfiguration struct {
	// LeaderElect runs leader election, so that only one replica schedules.
	// Default true.
	// +optional
	LeaderElect *bool `json:"leaderElect,omitempty"`

	// LeaseDuration is how long followers wait before taking over an
	// unrenewed lease. Default 15s.
	// +optional
	LeaseDuration *metav1.Duration `json:"leaseDuration,omitempty"`

	// RenewDeadline is how long the leader keeps trying to renew before it
	// gives up leadership. Default 10s; must be below LeaseDuration.
	// +optional
	RenewDeadline *metav1.Duration `json:"renewDeadline,omitempty"`

	// RetryPeriod is the wait between two attempts to acquire or renew.
	// Default 2s; must be below RenewDeadline.
	// +optional
	RetryPeriod *metav1.Duration `json:"retryPeriod,omitempty"`

	// ResourceLock is the kind of lock object. Only "leases" is supported,
	// which is also the default.
	// +optional
	ResourceLock string `json:"resourceLock,omitempty"`

	// ResourceName is the name of the Lease. Default caldera-scheduler.
	// +optional
	ResourceName string `json:"resourceName,omitempty"`

	// ResourceNamespace is the namespace of the Lease. Default kube-system.
	// +optional
	ResourceNamespace string `json:"resourceNamespace,omitempty"`
}

// LeasesResourceLock is the only supported leader election lock.
const LeasesResourceLock = "leases"
