package v1beta1

// Annotation and label keys of the scheduling API. The strings are fixed by
// Volcano; workloads written for Volcano carry them.
const (
	// VolcanoPrefix prefixes keys that are copied from a workload and its pods
	// onto the PodGroup created for them.
	VolcanoPrefix = "volcano.sh/"

	// KubeGroupNameAnnotation, on a pod, names the PodGroup it belongs to.
	// The PodGroup controller sets it on pods it groups.
	KubeGroupNameAnnotation = "scheduling.k8s.io/group-name"
	// GroupNameAnnotation is the scheduling.volcano.sh spelling of
	// KubeGroupNameAnnotation.
	GroupNameAnnotation = GroupName + "/group-name"
	// GroupMinMemberAnnotation, on a workload (Deployment, StatefulSet,
	// batch Job, ...), sets spec.minMember of the PodGroup created for its
	// pods, making the workload gang-scheduled. The value is a decimal count.
	GroupMinMemberAnnotation = GroupName + "/group-min-member"
	// GroupMinResourcesAnnotation carries spec.minResources of the PodGroup
	// created for a workload.
	GroupMinResourcesAnnotation = GroupName + "/group-min-resources"
	// QueueNameAnnotation, on a pod (template), names the Queue of the PodGroup
	// created for it. On a Namespace it names the queue PodGroups of that
	// namespace default to.
	QueueNameAnnotation = GroupName + "/queue-name"
	// QueueNameLabel, on a Volcano Job and the pods and PodGroups made from
	// it, records the job's queue. Integrations (e.g. KubeRay) also set it on
	// their workloads; the PodGroup controller reads it when a pod lacks
	// QueueNameAnnotation.
	QueueNameLabel = VolcanoPrefix + "queue-name"
	// QueueAllocationGateKey, on a pod, opts it into queue-capacity admission
	// and names the scheduling gate that holds it until its queue has room.
	QueueAllocationGateKey = GroupName + "/queue-allocation-gate"

	// HierarchyAnnotation, on a Queue, is its path in the legacy annotation
	// based hierarchy, e.g. "root/eng/ml". Superseded by spec.parent.
	HierarchyAnnotation = VolcanoPrefix + "hierarchy"
	// HierarchyWeightsAnnotation, on a Queue, is the weight of each segment
	// of HierarchyAnnotation, e.g. "1/2/8". Both must have as many segments.
	HierarchyWeightsAnnotation = VolcanoPrefix + "hierarchy-weights"
	// ClosedByParentAnnotation, on a Queue, is "true" when the queue was
	// closed because its parent was closed.
	ClosedByParentAnnotation = VolcanoPrefix + "closed-by-parent"

	// PreemptableKey, as a pod label or annotation ("true"/"false"), says
	// whether the pod may be preempted or reclaimed.
	PreemptableKey = VolcanoPrefix + "preemptable"
	// CooldownTimeKey, on a pod, is how long after starting it is protected
	// from preemption, as a Go duration ("600s", "10m").
	CooldownTimeKey = VolcanoPrefix + "cooldown-time"
	// RevocableZoneKey, on a pod, lets it use a revocable zone ("*" for any).
	RevocableZoneKey = VolcanoPrefix + "revocable-zone"
	// JDBMinAvailableKey, on a pod, is the minimum available pods of its job
	// disruption budget.
	JDBMinAvailableKey = VolcanoPrefix + "jdb-min-available"
	// JDBMaxUnavailableKey, on a pod, is the maximum unavailable pods of its
	// job disruption budget.
	JDBMaxUnavailableKey = VolcanoPrefix + "jdb-max-unavailable"
	// NumaPolicyKey, on a pod, is its NUMA topology policy.
	NumaPolicyKey = VolcanoPrefix + "numa-topology-policy"
	// TopologyDecisionAnnotation, on a pod, records the NUMA placement the
	// scheduler chose.
	TopologyDecisionAnnotation = VolcanoPrefix + "topology-decision"
	// QoSLevelKey, on a pod, is its colocation QoS level.
	QoSLevelKey = VolcanoPrefix + "qos-level"
	// SLAWaitingTimeKey, on a job or pod, is the longest it may stay Pending
	// before the sla plugin forces it forward, as a Go duration.
	SLAWaitingTimeKey = VolcanoPrefix + "sla-waiting-time"

	// NodeGroupNameLabel, on a Node, names the node group it belongs to.
	NodeGroupNameLabel = VolcanoPrefix + "nodegroup-name"
	// NodeGroupResourceLimitsAnnotation, on a Queue, limits what each node
	// group may allocate to the queue.
	NodeGroupResourceLimitsAnnotation = VolcanoPrefix + "nodegroup-resource-limits"
)
