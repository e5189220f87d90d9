// Package profile turns a scheduler configuration into the actions and
// plugin tiers a cycle runs. The scheduler and the simulator both use it, so
// a configuration means the same in both.
package profile

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/scheduler/actions"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins"
)

// Profile is a configuration made runnable.
type Profile struct {
	Actions []framework.Action
	Tiers   []framework.Tier
}

// NameRegistry returns the names of the actions and plugins this build
// provides, for validating a configuration.
func NameRegistry() configv1alpha1.NameRegistry {
	return configv1alpha1.NameRegistry{
		Plugins: slices.Sorted(maps.Keys(plugins.NewRegistry())),
		Actions: slices.Sorted(maps.Keys(actions.NewRegistry())),
	}
}

// pointSwitches maps the framework's extension points to the configuration
// switch that turns each off.
var pointSwitches = map[framework.ExtensionPoint]configv1alpha1.ExtensionPoint{
	framework.PointQueueOrder:        configv1alpha1.QueueOrder,
	framework.PointJobOrder:          configv1alpha1.JobOrder,
	framework.PointNamespaceOrder:    configv1alpha1.NamespaceOrder,
	framework.PointTaskOrder:         configv1alpha1.TaskOrder,
	framework.PointJobReady:          configv1alpha1.JobReady,
	framework.PointJobPipelined:      configv1alpha1.JobPipelined,
	framework.PointJobStarving:       configv1alpha1.JobStarving,
	framework.PointJobEnqueueable:    configv1alpha1.JobEnqueued,
	framework.PointAllocatable:       configv1alpha1.Allocatable,
	framework.PointOverused:          configv1alpha1.Overused,
	framework.PointPredicate:         configv1alpha1.Predicate,
	framework.PointNodeOrder:         configv1alpha1.NodeOrder,
	framework.PointPreemptable:       configv1alpha1.Preemptable,
	framework.PointReclaimable:       configv1alpha1.Reclaimable,
	framework.PointPreemptive:        configv1alpha1.Preemptive,
	framework.PointHyperNodeGradient: configv1alpha1.HyperNodeGradient,
}

// Build instantiates the configured actions and plugins. The configuration
// must have been defaulted and validated (config.Load does both); errors
// from plugin factories name the plugin's place in the configuration.
func Build(cfg *configv1alpha1.SchedulerConfiguration, h *framework.Handle) (*Profile, error) {
	actionReg := actions.NewRegistry()
	pluginReg := plugins.NewRegistry()
	p := &Profile{}
	for _, name := range cfg.Actions {
		newAction, ok := actionReg[name]
		if !ok {
			return nil, fmt.Errorf("actions: %q is not available in this version", name)
		}
		p.Actions = append(p.Actions, newAction(cfg))
	}
	for i := range cfg.Tiers {
		var tier framework.Tier
		for j := range cfg.Tiers[i].Plugins {
			pc := &cfg.Tiers[i].Plugins[j]
			path := field.NewPath("tiers").Index(i).Child("plugins").Index(j)
			factory, ok := pluginReg[pc.Name]
			if !ok {
				return nil, fmt.Errorf("%s: plugin %q is not available in this version", path.Child("name"), pc.Name)
			}
			typed, errs := configv1alpha1.DecodePluginArgs(pc, path.Child("args"))
			if len(errs) > 0 {
				return nil, errs.ToAggregate()
			}
			var args any
			if typed != nil {
				args = typed
			}
			// Each plugin gets the handle with its own switches.
			ph := *h
			ph.Hierarchy = pc.HierarchyEnabled()
			plugin, err := factory(args, &ph)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			disabled := map[framework.ExtensionPoint]bool{}
			for point, sw := range pointSwitches {
				if !pc.Enabled(sw) {
					disabled[point] = true
				}
			}
			tier.Plugins = append(tier.Plugins, framework.TierPlugin{Plugin: plugin, Disabled: disabled})
		}
		p.Tiers = append(p.Tiers, tier)
	}
	return p, nil
}

// BindPreparer prepares nodes before binds and releases what it kept for
// binds that did not happen (the binder's PreBinder).
type BindPreparer interface {
	PreBind(ctx context.Context, t *api.TaskInfo, node string) error
	Unreserve(ctx context.Context, t *api.TaskInfo)
}

// PreBinder runs the PreBind and Unreserve of every configured plugin that
// prepares nodes before binds (framework.PreBindPlugin), in tier order; nil
// when none does.
func (p *Profile) PreBinder() BindPreparer {
	var out PreBinders
	for _, tier := range p.Tiers {
		for _, tp := range tier.Plugins {
			if pb, ok := tp.Plugin.(framework.PreBindPlugin); ok {
				out = append(out, pb)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// PreBinders are plugins that prepare nodes before binds, run in order.
type PreBinders []framework.PreBindPlugin

// PreBind runs each plugin's PreBind until one fails; the plugins that
// had prepared the node are told to release what they kept.
func (ps PreBinders) PreBind(ctx context.Context, t *api.TaskInfo, node string) error {
	for i, p := range ps {
		if err := p.PreBind(ctx, t, node); err != nil {
			for _, done := range ps[:i] {
				done.Unreserve(ctx, t)
			}
			return err
		}
	}
	return nil
}

// Unreserve tells every plugin to release what it kept for the task.
func (ps PreBinders) Unreserve(ctx context.Context, t *api.TaskInfo) {
	for _, p := range ps {
		p.Unreserve(ctx, t)
	}
}
