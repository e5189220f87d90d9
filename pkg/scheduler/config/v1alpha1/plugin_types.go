package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// PluginConfig enables one plugin in a tier, with its arguments and the
// switches that turn single extension points of the plugin off.
//
// The switch names are Volcano's, spelled exactly as Volcano reads them:
// most begin "enable", a few "enabled". An unset switch means the extension
// point is enabled; only enableHierarchy, a feature rather than an extension
// point, is off unless set.
type PluginConfig struct {
	// Name of the plugin. See KnownPlugins.
	// +required
	Name string `json:"name"`

	// Args are the plugin's typed arguments; see the *Args types of this
	// package. Plugins without arguments take none.
	// +optional
	Args runtime.RawExtension `json:"args,omitzero"`

	// EnableJobOrder switches the plugin's job ordering.
	// +optional
	EnableJobOrder *bool `json:"enableJobOrder,omitempty"`
	// EnableNamespaceOrder switches the plugin's namespace ordering. Older
	// Volcano releases read it; current ones no longer do.
	// +optional
	EnableNamespaceOrder *bool `json:"enableNamespaceOrder,omitempty"`
	// EnableHierarchy turns on hierarchical queues in drf, capacity and
	// nodegroup (which then inherits node-group affinity from ancestors). Off
	// unless set to true.
	// +optional
	EnableHierarchy *bool `json:"enableHierarchy,omitempty"`
	// EnableJobReady switches the plugin's vote on whether a job is ready.
	// +optional
	EnableJobReady *bool `json:"enableJobReady,omitempty"`
	// EnableJobPipelined switches the plugin's vote on whether a job is
	// pipelined (placed on resources that are being released).
	// +optional
	EnableJobPipelined *bool `json:"enableJobPipelined,omitempty"`
	// EnableTaskOrder switches the plugin's task ordering within a job.
	// +optional
	EnableTaskOrder *bool `json:"enableTaskOrder,omitempty"`
	// EnablePreemptable switches the plugin's choice of preemption victims.
	// +optional
	EnablePreemptable *bool `json:"enablePreemptable,omitempty"`
	// EnableReclaimable switches the plugin's choice of reclaim victims.
	// +optional
	EnableReclaimable *bool `json:"enableReclaimable,omitempty"`
	// EnablePreemptive switches the plugin's vote on whether a queue may
	// reclaim.
	// +optional
	EnablePreemptive *bool `json:"enablePreemptive,omitempty"`
	// EnableQueueOrder switches the plugin's queue ordering.
	// +optional
	EnableQueueOrder *bool `json:"enableQueueOrder,omitempty"`
	// EnableClusterOrder switches the plugin's cluster ordering.
	// +optional
	EnableClusterOrder *bool `json:"enabledClusterOrder,omitempty"`
	// EnablePredicate switches the plugin's node filter.
	// +optional
	EnablePredicate *bool `json:"enablePredicate,omitempty"`
	// EnableBestNode switches the plugin's pick of the best node.
	// +optional
	EnableBestNode *bool `json:"enableBestNode,omitempty"`
	// EnableNodeOrder switches the plugin's node scoring.
	// +optional
	EnableNodeOrder *bool `json:"enableNodeOrder,omitempty"`
	// EnableTargetJob switches the plugin's choice of a target job to
	// reserve nodes for.
	// +optional
	EnableTargetJob *bool `json:"enableTargetJob,omitempty"`
	// EnableReservedNodes switches the plugin's node reservation.
	// +optional
	EnableReservedNodes *bool `json:"enableReservedNodes,omitempty"`
	// EnableJobEnqueued switches the plugin's vote on admitting a job from
	// its queue (enqueue) and its bookkeeping once admitted.
	// +optional
	EnableJobEnqueued *bool `json:"enableJobEnqueued,omitempty"`
	// EnableVictim switches the plugin's choice of tasks to evict outside
	// preemption and reclaim (shuffle, rescheduling).
	// +optional
	EnableVictim *bool `json:"enabledVictim,omitempty"`
	// EnableJobStarving switches the plugin's vote on whether a job still
	// needs resources.
	// +optional
	EnableJobStarving *bool `json:"enableJobStarving,omitempty"`
	// EnableOverused switches the plugin's check that a queue is over its
	// share.
	// +optional
	EnableOverused *bool `json:"enabledOverused,omitempty"`
	// EnableAllocatable switches the plugin's check that a queue may take
	// a task.
	// +optional
	EnableAllocatable *bool `json:"enabledAllocatable,omitempty"`
	// EnableHyperNodeOrder switches the plugin's HyperNode scoring.
	// +optional
	EnableHyperNodeOrder *bool `json:"enabledHyperNodeOrder,omitempty"`
	// EnableHyperNodeGradient switches the plugin's HyperNode gradient (the
	// tiers of HyperNodes a job may be placed in, tried in order).
	// +optional
	EnableHyperNodeGradient *bool `json:"enabledHyperNodeGradient,omitempty"`
	// EnableSubJobReady switches the plugin's readiness vote for sub-gangs.
	// +optional
	EnableSubJobReady *bool `json:"enabledSubJobReady,omitempty"`
	// EnableSubJobPipelined switches the plugin's pipelined vote for
	// sub-gangs.
	// +optional
	EnableSubJobPipelined *bool `json:"enabledSubJobPipelined,omitempty"`
	// EnableSubJobOrder switches the plugin's ordering of sub-gangs.
	// +optional
	EnableSubJobOrder *bool `json:"enabledSubJobOrder,omitempty"`
}

// ExtensionPoint names a decision a plugin can take part in, each behind one
// switch of PluginConfig.
type ExtensionPoint string

// Extension points.
const (
	JobOrder          ExtensionPoint = "JobOrder"
	NamespaceOrder    ExtensionPoint = "NamespaceOrder"
	JobReady          ExtensionPoint = "JobReady"
	JobPipelined      ExtensionPoint = "JobPipelined"
	TaskOrder         ExtensionPoint = "TaskOrder"
	Preemptable       ExtensionPoint = "Preemptable"
	Reclaimable       ExtensionPoint = "Reclaimable"
	Preemptive        ExtensionPoint = "Preemptive"
	QueueOrder        ExtensionPoint = "QueueOrder"
	ClusterOrder      ExtensionPoint = "ClusterOrder"
	Predicate         ExtensionPoint = "Predicate"
	BestNode          ExtensionPoint = "BestNode"
	NodeOrder         ExtensionPoint = "NodeOrder"
	TargetJob         ExtensionPoint = "TargetJob"
	ReservedNodes     ExtensionPoint = "ReservedNodes"
	JobEnqueued       ExtensionPoint = "JobEnqueued"
	Victim            ExtensionPoint = "Victim"
	JobStarving       ExtensionPoint = "JobStarving"
	Overused          ExtensionPoint = "Overused"
	Allocatable       ExtensionPoint = "Allocatable"
	HyperNodeOrder    ExtensionPoint = "HyperNodeOrder"
	HyperNodeGradient ExtensionPoint = "HyperNodeGradient"
	SubJobReady       ExtensionPoint = "SubJobReady"
	SubJobPipelined   ExtensionPoint = "SubJobPipelined"
	SubJobOrder       ExtensionPoint = "SubJobOrder"
)

// switchFor returns the switch of an extension point; ok is false for an
// unknown point. A switch statement rather than a map: Enabled is called
// from comparison functions on hot paths.
func (p *PluginConfig) switchFor(point ExtensionPoint) (sw *bool, ok bool) {
	switch point {
	case JobOrder:
		return p.EnableJobOrder, true
	case NamespaceOrder:
		return p.EnableNamespaceOrder, true
	case JobReady:
		return p.EnableJobReady, true
	case JobPipelined:
		return p.EnableJobPipelined, true
	case TaskOrder:
		return p.EnableTaskOrder, true
	case Preemptable:
		return p.EnablePreemptable, true
	case Reclaimable:
		return p.EnableReclaimable, true
	case Preemptive:
		return p.EnablePreemptive, true
	case QueueOrder:
		return p.EnableQueueOrder, true
	case ClusterOrder:
		return p.EnableClusterOrder, true
	case Predicate:
		return p.EnablePredicate, true
	case BestNode:
		return p.EnableBestNode, true
	case NodeOrder:
		return p.EnableNodeOrder, true
	case TargetJob:
		return p.EnableTargetJob, true
	case ReservedNodes:
		return p.EnableReservedNodes, true
	case JobEnqueued:
		return p.EnableJobEnqueued, true
	case Victim:
		return p.EnableVictim, true
	case JobStarving:
		return p.EnableJobStarving, true
	case Overused:
		return p.EnableOverused, true
	case Allocatable:
		return p.EnableAllocatable, true
	case HyperNodeOrder:
		return p.EnableHyperNodeOrder, true
	case HyperNodeGradient:
		return p.EnableHyperNodeGradient, true
	case SubJobReady:
		return p.EnableSubJobReady, true
	case SubJobPipelined:
		return p.EnableSubJobPipelined, true
	case SubJobOrder:
		return p.EnableSubJobOrder, true
	}
	return nil, false
}

// Enabled reports whether the plugin takes part in extension point point:
// true unless its switch is set to false. An unknown point is not enabled.
func (p *PluginConfig) Enabled(point ExtensionPoint) bool {
	sw, ok := p.switchFor(point)
	if !ok {
		return false
	}
	return sw == nil || *sw
}

// HierarchyEnabled reports whether enableHierarchy is set to true.
func (p *PluginConfig) HierarchyEnabled() bool {
	return p.EnableHierarchy != nil && *p.EnableHierarchy
}
