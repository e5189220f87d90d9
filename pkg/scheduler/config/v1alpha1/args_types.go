package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The typed arguments of the plugins that take arguments. Each field names
// the Volcano argument key it corresponds to; docs/scheduler-configuration.md
// has the full table. Pointer fields are optional and defaulted by Default.

// BinpackArgs are the arguments of the binpack plugin, which scores nodes
// higher the fuller they would be after placing the task.
type BinpackArgs struct {
	// Weight of the plugin's score among all node scores; 0 turns scoring
	// off. Volcano's binpack.weight. Default 1.
	// +optional
	Weight *int32 `json:"weight,omitempty"`

	// CPU is the weight of CPU in the score. Volcano's binpack.cpu.
	// Default 1.
	// +optional
	CPU *int32 `json:"cpu,omitempty"`

	// Memory is the weight of memory in the score. Volcano's binpack.memory.
	// Default 1.
	// +optional
	Memory *int32 `json:"memory,omitempty"`

	// Resources weighs further resources, such as nvidia.com/gpu, in the
	// score. Resources not listed do not count. Volcano's binpack.resources
	// (the names) and binpack.resources.<name> (each weight, default 1).
	// +optional
	Resources map[corev1.ResourceName]int32 `json:"resources,omitempty"`
}

// UsageArgs are the arguments of the usage plugin, which places pods by
// what nodes really use (their NodeUsage, published by caldera-agent):
// it keeps new pods off nodes above a usage threshold and scores nodes by
// their usage once the pod is added.
type UsageArgs struct {
	// Weight of the plugin's score among all node scores; 0 turns scoring
	// off. Volcano's usage.weight. Default 5.
	// +optional
	Weight *int32 `json:"weight,omitempty"`

	// CPUWeight is the weight of CPU in the score. Volcano's cpu.weight.
	// Default 1.
	// +optional
	CPUWeight *int32 `json:"cpuWeight,omitempty"`

	// MemoryWeight is the weight of memory in the score. Volcano's
	// memory.weight. Default 1.
	// +optional
	MemoryWeight *int32 `json:"memoryWeight,omitempty"`

	// Thresholds are the usage percentages of a node's allocatable above
	// which it takes no new pod (with the plugin's enablePredicate, on by
	// default). Volcano's thresholds.
	// +optional
	Thresholds UsageThresholds `json:"thresholds,omitzero"`

	// StaleAfter is the age past which a node's usage is not trusted: the
	// node is filtered and scored by requests instead. Default 5m.
	// +optional
	StaleAfter *metav1.Duration `json:"staleAfter,omitempty"`
}

// UsageThresholds are usage percentages, in [0, 100].
type UsageThresholds struct {
	// CPU: Volcano's thresholds.cpu. Default 80.
	// +optional
	CPU *float64 `json:"cpu,omitempty"`
	// Memory: Volcano's thresholds.mem. Default 80.
	// +optional
	Memory *float64 `json:"memory,omitempty"`
}

// NodeOrderArgs are the arguments of the nodeorder plugin: the weights of
// the Kubernetes scoring functions it runs. A weight of 0 turns that score
// off. Each field is Volcano's "<name>.weight" key.
type NodeOrderArgs struct {
	// LeastRequestedWeight favours nodes with the most free CPU and memory.
	// Volcano's leastrequested.weight. Default 1.
	// +optional
	LeastRequestedWeight *int32 `json:"leastRequestedWeight,omitempty"`

	// MostRequestedWeight favours the fullest nodes. Volcano's
	// mostrequested.weight. Default 0.
	// +optional
	MostRequestedWeight *int32 `json:"mostRequestedWeight,omitempty"`

	// NodeAffinityWeight scores preferred node affinity. Volcano's
	// nodeaffinity.weight. Default 2.
	// +optional
	NodeAffinityWeight *int32 `json:"nodeAffinityWeight,omitempty"`

	// PodAffinityWeight scores preferred inter-pod affinity and
	// anti-affinity. Volcano's podaffinity.weight. Default 2.
	// +optional
	PodAffinityWeight *int32 `json:"podAffinityWeight,omitempty"`

	// BalancedResourceWeight favours nodes whose CPU, memory and GPU use stay
	// balanced. Volcano's balancedresource.weight. Default 1.
	// +optional
	BalancedResourceWeight *int32 `json:"balancedResourceWeight,omitempty"`

	// TaintTolerationWeight scores PreferNoSchedule taints the pod
	// tolerates. Volcano's tainttoleration.weight. Default 3.
	// +optional
	TaintTolerationWeight *int32 `json:"taintTolerationWeight,omitempty"`

	// ImageLocalityWeight favours nodes that already hold the pod's images.
	// Volcano's imagelocality.weight. Default 1.
	// +optional
	ImageLocalityWeight *int32 `json:"imageLocalityWeight,omitempty"`

	// PodTopologySpreadWeight scores soft topology spread constraints.
	// Volcano's podtopologyspread.weight. Default 2.
	// +optional
	PodTopologySpreadWeight *int32 `json:"podTopologySpreadWeight,omitempty"`
}

// OvercommitArgs are the arguments of the overcommit plugin, which admits
// jobs from their queues (enqueue) while their minimum resources fit in the
// cluster's idle resources multiplied by a factor.
type OvercommitArgs struct {
	// Factor multiplies the cluster's resources; at least 1. Volcano's
	// overcommit-factor. Default 1.2.
	// +optional
	Factor *float64 `json:"factor,omitempty"`

	// ResourceFactors overrides Factor for single resources (cpu, memory,
	// nvidia.com/gpu, ...); each at least 1. Volcano's
	// overcommit-factor.<resource>.
	// +optional
	ResourceFactors map[corev1.ResourceName]float64 `json:"resourceFactors,omitempty"`
}

// PredicatesArgs are the arguments of the predicates plugin, which filters
// nodes with the Kubernetes filter plugins. Each switch turns one filter on
// or off.
type PredicatesArgs struct {
	// NodeAffinity filters by node selector and required node affinity.
	// Volcano's predicate.NodeAffinityEnable. Default true.
	// +optional
	NodeAffinity *bool `json:"nodeAffinity,omitempty"`

	// NodePorts filters nodes whose host ports are taken. Volcano's
	// predicate.NodePortsEnable. Default true.
	// +optional
	NodePorts *bool `json:"nodePorts,omitempty"`

	// TaintToleration filters nodes with NoSchedule and NoExecute taints the
	// pod does not tolerate. Volcano's predicate.TaintTolerationEnable.
	// Default true.
	// +optional
	TaintToleration *bool `json:"taintToleration,omitempty"`

	// PodAffinity filters by required inter-pod affinity and anti-affinity.
	// Volcano's predicate.PodAffinityEnable. Default true.
	// +optional
	PodAffinity *bool `json:"podAffinity,omitempty"`

	// NodeVolumeLimits filters nodes at their CSI volume attach limit.
	// Volcano's predicate.NodeVolumeLimitsEnable. Default true.
	// +optional
	NodeVolumeLimits *bool `json:"nodeVolumeLimits,omitempty"`

	// VolumeZone filters nodes outside the zones of the pod's volumes.
	// Volcano's predicate.VolumeZoneEnable. Default true.
	// +optional
	VolumeZone *bool `json:"volumeZone,omitempty"`

	// PodTopologySpread filters by hard topology spread constraints.
	// Volcano's predicate.PodTopologySpreadEnable. Default true.
	// +optional
	PodTopologySpread *bool `json:"podTopologySpread,omitempty"`

	// VolumeBinding filters and scores by the pod's persistent volume
	// claims, and binds them before the pod. Volcano's
	// predicate.VolumeBindingEnable. Default true.
	// +optional
	VolumeBinding *bool `json:"volumeBinding,omitempty"`

	// VolumeBindingTimeout bounds waiting for volumes to bind. Volcano's
	// volumebinding.bindTimeoutSeconds. Default 30s.
	// +optional
	VolumeBindingTimeout *metav1.Duration `json:"volumeBindingTimeout,omitempty"`

	// VolumeBindingWeight is the weight of the volume binding score.
	// Volcano's volumebinding.weight. Default 1.
	// +optional
	VolumeBindingWeight *int32 `json:"volumeBindingWeight,omitempty"`

	// VolumeBindingShape maps storage utilization to a score when scoring
	// by storage capacity. Volcano's volumebinding.shape.
	// +optional
	// +listType=atomic
	VolumeBindingShape []UtilizationShapePoint `json:"volumeBindingShape,omitempty"`

	// DynamicResourceAllocation filters by the pod's resource claims.
	// Volcano's predicate.DynamicResourceAllocationEnable. Default false.
	// +optional
	DynamicResourceAllocation *bool `json:"dynamicResourceAllocation,omitempty"`

	// DRAFilterTimeout bounds the resource claim filter for one node.
	// Volcano's dynamicresources.filterTimeoutSeconds. Default 10s.
	// +optional
	DRAFilterTimeout *metav1.Duration `json:"draFilterTimeout,omitempty"`

	// Cache remembers filter results per node and pod template within a
	// cycle. It changes how fast nodes are filtered, not the outcome.
	// Volcano's predicate.CacheEnable. Default false.
	// +optional
	Cache *bool `json:"cache,omitempty"`

	// Proportional, when set, keeps CPU and memory free on nodes in
	// proportion to their idle units of a scarce resource, so that tasks
	// not asking for that resource cannot strand it. Volcano's
	// predicate.ProportionalEnable with predicate.resources.
	// +optional
	Proportional *ProportionalPredicate `json:"proportional,omitempty"`
}

// UtilizationShapePoint is one point of a piecewise linear score function.
type UtilizationShapePoint struct {
	// Utilization in percent, 0 to 100, increasing along the shape.
	Utilization int32 `json:"utilization"`
	// Score at that utilization, 0 to 10.
	Score int32 `json:"score"`
}

// ProportionalPredicate lists, per scarce resource, what to keep free for
// each idle unit of it.
type ProportionalPredicate struct {
	// Resources maps a scarce resource (for example nvidia.com/gpu) to the
	// CPU and memory kept free per idle unit. Volcano's predicate.resources
	// (the names), predicate.resources.<name>.cpu (cores per unit) and
	// predicate.resources.<name>.memory (gigabytes, 10^9 bytes, per unit).
	// +required
	Resources map[corev1.ResourceName]ResourceReservation `json:"resources"`
}

// ResourceReservation is the CPU and memory kept free per unit of a scarce
// resource.
type ResourceReservation struct {
	// CPU per unit. Default 1.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`
	// Memory per unit. Default 1G.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// NetworkTopologyAwareArgs are the arguments of the network-topology-aware
// plugin, which places gangs inside HyperNodes (network domains) and packs
// HyperNodes.
type NetworkTopologyAwareArgs struct {
	// Weight of the plugin's HyperNode and node scores. Volcano's weight.
	// Default 1.
	// +optional
	Weight *int32 `json:"weight,omitempty"`

	// BinpackCPU is the weight of CPU when packing HyperNodes. Volcano's
	// hypernode.binpack.cpu. Default 1.
	// +optional
	BinpackCPU *int32 `json:"binpackCPU,omitempty"`

	// BinpackMemory is the weight of memory when packing HyperNodes.
	// Volcano's hypernode.binpack.memory. Default 1.
	// +optional
	BinpackMemory *int32 `json:"binpackMemory,omitempty"`

	// BinpackResources weighs further resources when packing HyperNodes.
	// Volcano's hypernode.binpack.resources and
	// hypernode.binpack.resources.<name> (default 1 each).
	// +optional
	BinpackResources map[corev1.ResourceName]int32 `json:"binpackResources,omitempty"`

	// NormalPodBinpack packs pods without a network topology constraint
	// into HyperNodes too. Volcano's hypernode.binpack.normal-pod.enable.
	// Default true.
	// +optional
	NormalPodBinpack *bool `json:"normalPodBinpack,omitempty"`

	// NormalPodFading weighs each HyperNode tier by fading^(tier-1) when
	// packing pods without a network topology constraint; 0 counts only
	// tier 1. Volcano's hypernode.binpack.normal-pod.fading. Default 0.8.
	// +optional
	NormalPodFading *float64 `json:"normalPodFading,omitempty"`
}

// NodeGroupArgs are the arguments of the nodegroup plugin, which confines
// a queue's pods to the node groups (nodes labelled
// volcano.sh/nodegroup-name) its spec.affinity names.
type NodeGroupArgs struct {
	// Strict keeps pods of queues without node-group affinity off every
	// node. When false they may run on nodes without a node group.
	// Volcano's strict. Default true.
	// +optional
	Strict *bool `json:"strict,omitempty"`

	// EnablePreferredOrder scores the preferred node groups by their
	// position in the queue's list, the first highest, rather than alike.
	// Volcano's enablePreferredOrder. Default false.
	// +optional
	EnablePreferredOrder *bool `json:"enablePreferredOrder,omitempty"`
}

// TaskTopologyArgs are the arguments of the task-topology plugin, which
// places a job's pods by the task affinity and anti-affinity its
// annotations declare.
type TaskTopologyArgs struct {
	// Weight of the plugin's score. Volcano's task-topology.weight.
	// Default 1.
	// +optional
	Weight *int32 `json:"weight,omitempty"`
}

// NUMAAwareArgs are the arguments of the numa-aware plugin, which places
// Guaranteed pods only where the node's kubelet will pin their CPUs as
// their NUMA topology policy asks, and prefers nodes where they span the
// fewest NUMA nodes.
type NUMAAwareArgs struct {
	// Weight of the plugin's score. Volcano's weight. Default 1.
	// +optional
	Weight *int32 `json:"weight,omitempty"`
}

// ResourceStrategyFitArgs are the arguments of the resource-strategy-fit
// plugin, which scores nodes per resource by how full (MostAllocated) or
// how empty (LeastAllocated) the task would leave them, and keeps tasks
// that do not need a scarce resource off the nodes that have it.
type ResourceStrategyFitArgs struct {
	// Weight of the plugin's score. Volcano's resourceStrategyFitWeight.
	// Default 10.
	// +optional
	Weight *int32 `json:"weight,omitempty"`

	// Resources maps a resource name, or a prefix ending in "*" (for
	// example nvidia.com/*), to its strategy. A resource takes its exact
	// entry, else the longest matching prefix; resources that match none
	// do not count. Volcano's resources. Default: cpu and memory,
	// LeastAllocated, weight 1.
	// +optional
	Resources map[string]ResourceStrategy `json:"resources,omitempty"`

	// SRA (scarce resource avoidance) keeps tasks that do not need a
	// scarce resource off the nodes that have it. Volcano's sra.* keys.
	// +optional
	SRA *ScarceResourceAvoidance `json:"sra,omitempty"`
}

// ScoringStrategy is how a resource is scored.
type ScoringStrategy string

// Scoring strategies. The strings are Volcano's.
const (
	// MostAllocated scores (used+requested)/allocatable: it packs.
	MostAllocated ScoringStrategy = "MostAllocated"
	// LeastAllocated scores 1-(used+requested)/allocatable: it spreads.
	LeastAllocated ScoringStrategy = "LeastAllocated"
)

// ResourceStrategy is one resource's strategy and weight.
type ResourceStrategy struct {
	// Type is MostAllocated or LeastAllocated.
	// +required
	Type ScoringStrategy `json:"type"`
	// Weight of the resource among the task's resources; >= 0. Default 1.
	// +optional
	Weight *int32 `json:"weight,omitempty"`
}

// SRAPolicy is how scarce resources are kept for the tasks that need them.
type SRAPolicy string

// Scarce-resource avoidance policies. The strings are Volcano's.
const (
	// SRARetention scores nodes higher the fewer scarce resources they
	// have that the task does not ask for.
	SRARetention SRAPolicy = "retention"
	// SRAProportional keeps CPU and memory free on a node in proportion
	// to its idle units of each scarce resource: a node the task would
	// leave short is filtered out.
	SRAProportional SRAPolicy = "proportional"
)

// ScarceResourceAvoidance configures scarce-resource avoidance.
type ScarceResourceAvoidance struct {
	// Policy is retention or proportional. Volcano's sra.policy.
	// +required
	Policy SRAPolicy `json:"policy"`

	// Resources are the scarce resources, each with its retention weight
	// (higher: more scarce; default 1). Volcano's sra.resources and
	// sra.retention.<name>.
	// +required
	Resources map[corev1.ResourceName]int32 `json:"resources"`

	// RetentionWeight scales the retention score. Volcano's
	// sra.retention.weight. Default 1.
	// +optional
	RetentionWeight *int32 `json:"retentionWeight,omitempty"`

	// Proportional is, per scarce resource, the CPU and memory kept free
	// per idle unit (default 1 CPU and 1G each). Volcano's
	// sra.proportional.<name>.cpu (cores) and .memory (gigabytes).
	// +optional
	Proportional map[corev1.ResourceName]ResourceReservation `json:"proportional,omitempty"`
}

// DeviceShareArgs are the arguments of the deviceshare plugin, which places
// pods on a node's individual GPU cards: a share of one card's memory
// (volcano.sh/gpu-memory) or whole cards (volcano.sh/gpu-number), and
// writes the chosen cards into the pod's volcano.sh/gpu-index annotation.
type DeviceShareArgs struct {
	// GPUSharing places pods asking for volcano.sh/gpu-memory on one card
	// with that much memory free. Volcano's deviceshare.GPUSharingEnable.
	// Default true.
	// +optional
	GPUSharing *bool `json:"gpuSharing,omitempty"`

	// GPUNumber places pods asking for volcano.sh/gpu-number on that many
	// idle cards. Volcano's deviceshare.GPUNumberEnable. Default true.
	// Unlike Volcano, both may be on: a pod asks for one or the other, and
	// a card taken whole is shared with nobody.
	// +optional
	GPUNumber *bool `json:"gpuNumber,omitempty"`

	// SchedulePolicy chooses among nodes and cards: binpack (the fullest
	// card that fits, nodes whose cards are most used), spread (the
	// emptiest card, nodes whose cards are least used), or fgd
	// (fragmentation gradient descent: the node and card where the placement
	// leaves the fewest GPU resources that the cluster's typical tasks
	// could not use). Volcano's deviceshare.SchedulePolicy. Default
	// binpack.
	// +optional
	SchedulePolicy *string `json:"schedulePolicy,omitempty"`

	// Weight of the plugin's score among all node scores; 0 turns scoring
	// off (cards are still chosen by the policy). Volcano's
	// deviceshare.ScheduleWeight. Default 1.
	// +optional
	Weight *int32 `json:"weight,omitempty"`

	// VGPU places pods asking for virtual GPUs (volcano.sh/vgpu-number,
	// -memory, -cores) on the cards a node's vGPU device plugin registers,
	// and writes the chosen devices for it at bind. Volcano's
	// deviceshare.VGPUEnable. Default false; when on, gpuSharing and
	// gpuNumber default to off, and may not be on with it (as in Volcano:
	// a node runs one NVIDIA device plugin). Policies binpack and spread.
	// +optional
	VGPU *bool `json:"vgpu,omitempty"`

	// DeviceConfig is the vGPU device plugin's ConfigMap, whose key
	// device-config.yaml lists the MIG geometries of card models
	// (nvidia.knownMigGeometries). Volcano's
	// deviceshare.KnownGeometriesCMNamespace and
	// deviceshare.KnownGeometriesCMName. Read only with vgpu on; default
	// kube-system/volcano-vgpu-device-config. While it is absent, or lists
	// no geometries, the shipped ones (A30, A100 40 and 80 GB) apply.
	// +optional
	DeviceConfig *ConfigMapReference `json:"deviceConfig,omitempty"`
}

// ConfigMapReference names a ConfigMap.
type ConfigMapReference struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Where the vGPU device plugin's configuration is by default.
const (
	DefaultDeviceConfigNamespace = "kube-system"
	DefaultDeviceConfigName      = "volcano-vgpu-device-config"
)

// Device-share scheduling policies.
const (
	DeviceSharePolicyBinpack = "binpack"
	DeviceSharePolicySpread  = "spread"
	DeviceSharePolicyFGD     = "fgd"
)
