package framework

// ExtensionPoint names a point where plugins are consulted; each can be
// switched off per plugin in the configuration (Volcano's enabled... keys).
type ExtensionPoint string

// Extension points that can be switched off per plugin.
const (
	PointQueueOrder     ExtensionPoint = "QueueOrder"
	PointJobOrder       ExtensionPoint = "JobOrder"
	PointNamespaceOrder ExtensionPoint = "NamespaceOrder"
	PointTaskOrder      ExtensionPoint = "TaskOrder"
	PointJobValid       ExtensionPoint = "JobValid"
	PointJobReady       ExtensionPoint = "JobReady"
	PointJobPipelined   ExtensionPoint = "JobPipelined"
	PointJobStarving    ExtensionPoint = "JobStarving"
	PointJobEnqueueable ExtensionPoint = "JobEnqueueable"
	PointAllocatable    ExtensionPoint = "Allocatable"
	PointOverused       ExtensionPoint = "Overused"
	PointPredicate      ExtensionPoint = "Predicate"
	PointNodeOrder      ExtensionPoint = "NodeOrder"
	PointPreemptable    ExtensionPoint = "Preemptable"
	PointReclaimable    ExtensionPoint = "Reclaimable"
	PointPreemptive     ExtensionPoint = "Preemptive"
	// PointHyperNodeGradient: the domains a job with a network topology
	// constraint is tried in.
	PointHyperNodeGradient ExtensionPoint = "HyperNodeGradient"
)

// TierPlugin is a plugin instance in a tier with the points switched off
// for it.
type TierPlugin struct {
	Plugin   Plugin
	Disabled map[ExtensionPoint]bool
}

// Tier is a group of plugins of equal standing.
type Tier struct {
	Plugins []TierPlugin
}

// enabled collects, tier by tier, the plugins that implement T and have
// point enabled.
func enabled[T Plugin](tiers []Tier, point ExtensionPoint) [][]T {
	out := make([][]T, 0, len(tiers))
	for _, tier := range tiers {
		var ps []T
		for _, tp := range tier.Plugins {
			if tp.Disabled[point] {
				continue
			}
			if p, ok := tp.Plugin.(T); ok {
				ps = append(ps, p)
			}
		}
		if len(ps) > 0 {
			out = append(out, ps)
		}
	}
	return out
}

// all collects every plugin implementing T, in tier order, ignoring switches
// (for session and event handling).
func all[T Plugin](tiers []Tier) []T {
	var out []T
	for _, tier := range tiers {
		for _, tp := range tier.Plugins {
			if p, ok := tp.Plugin.(T); ok {
				out = append(out, p)
			}
		}
	}
	return out
}
