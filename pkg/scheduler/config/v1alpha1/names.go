package v1alpha1

import (
	"slices"
)

// Action names. The strings are Volcano's.
const (
	EnqueueAction  = "enqueue"
	AllocateAction = "allocate"
	BackfillAction = "backfill"
	PreemptAction  = "preempt"
	ReclaimAction  = "reclaim"
	ShuffleAction  = "shuffle"
)

// Plugin names. The strings are Volcano's.
const (
	GangPlugin                 = "gang"
	PriorityPlugin             = "priority"
	DRFPlugin                  = "drf"
	ProportionPlugin           = "proportion"
	CapacityPlugin             = "capacity"
	PredicatesPlugin           = "predicates"
	NodeOrderPlugin            = "nodeorder"
	BinpackPlugin              = "binpack"
	ConformancePlugin          = "conformance"
	OvercommitPlugin           = "overcommit"
	NetworkTopologyAwarePlugin = "network-topology-aware"
	TaskTopologyPlugin         = "task-topology"
	NodeGroupPlugin            = "nodegroup"
	ResourceStrategyFitPlugin  = "resource-strategy-fit"
	SLAPlugin                  = "sla"
	TDMPlugin                  = "tdm"
	NUMAAwarePlugin            = "numa-aware"
	DeviceSharePlugin          = "deviceshare"
	UsagePlugin                = "usage"
	ExtenderPlugin             = "extender"
	CDPPlugin                  = "cdp"
	ReschedulingPlugin         = "rescheduling"
	PDBPlugin                  = "pdb"
	ResourceQuotaPlugin        = "resourcequota"
	CapacityCardPlugin         = "capacity-card"
)

// KnownActions returns every action name a configuration may list. Whether
// this build runs an action is the Registry's answer.
func KnownActions() []string {
	return []string{EnqueueAction, AllocateAction, BackfillAction, PreemptAction, ReclaimAction, ShuffleAction}
}

// KnownPlugins returns every plugin name a configuration may list: Volcano's
// plugins. A known name that the Registry does not hold is reported as "not
// available in this version"; any other name as unknown, with a suggestion.
func KnownPlugins() []string {
	return []string{
		BinpackPlugin, CapacityPlugin, CapacityCardPlugin, CDPPlugin, ConformancePlugin,
		DeviceSharePlugin, DRFPlugin, ExtenderPlugin, GangPlugin, NetworkTopologyAwarePlugin,
		NodeGroupPlugin, NodeOrderPlugin, NUMAAwarePlugin, OvercommitPlugin, PDBPlugin,
		PredicatesPlugin, PriorityPlugin, ProportionPlugin, ReschedulingPlugin,
		ResourceQuotaPlugin, ResourceStrategyFitPlugin, SLAPlugin, TaskTopologyPlugin,
		TDMPlugin, UsagePlugin,
	}
}

// Registry tells validation which plugins and actions this build of the
// scheduler implements. The scheduler passes its plugin and action
// registries; tests pass a NameRegistry.
//
// +kubebuilder:object:generate=false
type Registry interface {
	// HasPlugin reports whether the plugin is implemented.
	HasPlugin(name string) bool
	// HasAction reports whether the action is implemented.
	HasAction(name string) bool
	// PluginNames lists the implemented plugins, for error messages.
	PluginNames() []string
}

// NameRegistry is a Registry from two lists of names.
//
// +kubebuilder:object:generate=false
type NameRegistry struct {
	Plugins []string
	Actions []string
}

var _ Registry = NameRegistry{}

// HasPlugin implements Registry.
func (r NameRegistry) HasPlugin(name string) bool { return slices.Contains(r.Plugins, name) }

// HasAction implements Registry.
func (r NameRegistry) HasAction(name string) bool { return slices.Contains(r.Actions, name) }

// PluginNames implements Registry.
func (r NameRegistry) PluginNames() []string { return slices.Sorted(slices.Values(r.Plugins)) }
