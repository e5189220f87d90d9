package podfit

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/imagelocality"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/interpodaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodedeclaredfeatures"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodename"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeports"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/podtopologyspread"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumerestrictions"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumezone"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
)

// profileName names the upstream profile; it only shows in kube-scheduler's
// metric labels.
const profileName = "caldera"

// podPlugins are the kube-scheduler plugins whose filter, score, reserve and
// pre-bind extension points decide what a pod's own constraints mean. Each
// runs at every extension point it implements, in the order and with the
// weight and arguments of kube-scheduler's default profile.
var podPlugins = []string{
	names.NodeUnschedulable,
	names.NodeName,
	names.TaintToleration,
	names.NodeAffinity,
	names.NodePorts,
	names.NodeResourcesFit,
	names.VolumeRestrictions,
	names.NodeVolumeLimits,
	names.VolumeBinding,
	names.VolumeZone,
	names.PodTopologySpread,
	names.InterPodAffinity,
	names.NodeResourcesBalancedAllocation,
	names.ImageLocality,
	// GA in 1.37: a pod that needs a node feature (inferred from its spec)
	// only fits nodes that declare it.
	names.NodeDeclaredFeatures,
}

// draPlugins run when ProfileOptions.DynamicResources asks for them:
// kube-scheduler's DynamicResources plugin allocates the devices of a pod's
// ResourceClaims (PreFilter, Filter, Score, Reserve, PreBind).
var draPlugins = []string{names.DynamicResources}

// inertPlugins must be in every upstream profile (exactly one queue sort,
// at least one binder) but are never run here: Caldera orders its own
// queues and binds through its own binder.
var inertPlugins = []string{names.PrioritySort, names.DefaultBinder}

// excludedPlugins are in kube-scheduler's default profile (with the default
// feature gates, or behind gates that are off by default) and deliberately
// not run; docs/design/podfit.md says why for each.
var excludedPlugins = []string{
	names.SchedulingGates,   // Caldera holds gated pods back itself.
	names.DefaultPreemption, // Caldera's preempt and reclaim actions decide evictions.
	names.DynamicResources,  // draPlugins: run only when asked; pods with claims are refused otherwise.
	names.GangScheduling,    // Caldera's gang plugin owns gangs.
	names.TopologyPlacementGenerator,
	names.PodGroupPodsCount,
	names.DeferredPodScheduling, // in-place resize preemption, alpha.
}

// newRegistry returns the factories of the plugins the profile names, with
// the feature set passed in rather than read from the global gate. The
// factories are the ones plugins.NewInTreeRegistry uses.
func newRegistry(fts plfeature.Features) frameworkruntime.Registry {
	return frameworkruntime.Registry{
		nodeunschedulable.Name:               frameworkruntime.FactoryAdapter(fts, nodeunschedulable.New),
		nodename.Name:                        frameworkruntime.FactoryAdapter(fts, nodename.New),
		tainttoleration.Name:                 frameworkruntime.FactoryAdapter(fts, tainttoleration.New),
		nodeaffinity.Name:                    frameworkruntime.FactoryAdapter(fts, nodeaffinity.New),
		nodeports.Name:                       frameworkruntime.FactoryAdapter(fts, nodeports.New),
		noderesources.Name:                   frameworkruntime.FactoryAdapter(fts, noderesources.NewFit),
		volumerestrictions.Name:              frameworkruntime.FactoryAdapter(fts, volumerestrictions.New),
		nodevolumelimits.CSIName:             frameworkruntime.FactoryAdapter(fts, nodevolumelimits.NewCSI),
		volumebinding.Name:                   frameworkruntime.FactoryAdapter(fts, volumebinding.New),
		dynamicresources.Name:                frameworkruntime.FactoryAdapter(fts, dynamicresources.New),
		volumezone.Name:                      frameworkruntime.FactoryAdapter(fts, volumezone.New),
		podtopologyspread.Name:               frameworkruntime.FactoryAdapter(fts, podtopologyspread.New),
		interpodaffinity.Name:                frameworkruntime.FactoryAdapter(fts, interpodaffinity.New),
		noderesources.BalancedAllocationName: frameworkruntime.FactoryAdapter(fts, noderesources.NewBalancedAllocation),
		imagelocality.Name:                   imagelocality.New,
		nodedeclaredfeatures.Name:            frameworkruntime.FactoryAdapter(fts, nodedeclaredfeatures.New),
		queuesort.Name:                       queuesort.New,
		defaultbinder.Name:                   defaultbinder.New,
	}
}

// newProfile derives the profile from kube-scheduler's own default
// configuration, so that plugin order, score weights and plugin arguments
// (topology spread system defaults, the fit scoring strategy, the volume
// bind timeout, ...) are exactly kube-scheduler's. It keeps podPlugins and
// inertPlugins and fails on any default plugin it does not know, so that a
// Kubernetes upgrade that adds one is noticed rather than silently skipped.
// ProfileOptions change kube-scheduler's default profile the way the
// scheduler configuration asks (Volcano's predicate switches and nodeorder
// weights).
type ProfileOptions struct {
	// DisabledFilters are plugins whose PreFilter and Filter do not run.
	DisabledFilters []string
	// ScoreWeights replace plugins' score weights; 0 turns a score off.
	ScoreWeights map[string]int32
	// MostAllocated makes NodeResourcesFit score fuller nodes higher
	// instead of emptier ones.
	MostAllocated bool
	// VolumeBindTimeout, when positive, replaces VolumeBinding's timeout.
	VolumeBindTimeout time.Duration
	// VolumeBindingShape, when set, replaces VolumeBinding's storage
	// capacity scoring shape.
	VolumeBindingShape []config.UtilizationShapePoint
	// DynamicResources runs kube-scheduler's DynamicResources plugin, so
	// pods with ResourceClaims are placed and their claims allocated.
	// Without it such pods fit no node.
	DynamicResources bool
	// DRAFilterTimeout, when set, bounds DynamicResources' Filter on one
	// node; 0 means no bound.
	DRAFilterTimeout *time.Duration
}

func newProfile(po ProfileOptions) (*config.KubeSchedulerProfile, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, fmt.Errorf("kube-scheduler default configuration: %w", err)
	}
	if len(cfg.Profiles) == 0 || cfg.Profiles[0].Plugins == nil {
		return nil, fmt.Errorf("kube-scheduler default configuration has no profile with plugins")
	}
	def := cfg.Profiles[0]
	keep := func(name string) bool {
		return slices.Contains(podPlugins, name) || slices.Contains(inertPlugins, name) ||
			(po.DynamicResources && slices.Contains(draPlugins, name))
	}
	var enabled []config.Plugin
	for _, p := range def.Plugins.MultiPoint.Enabled {
		switch {
		case keep(p.Name):
			enabled = append(enabled, p)
		case slices.Contains(excludedPlugins, p.Name):
		default:
			return nil, fmt.Errorf("kube-scheduler's default profile enables plugin %q, which podfit neither runs nor excludes", p.Name)
		}
	}
	wanted := podPlugins
	if po.DynamicResources {
		wanted = append(slices.Clip(wanted), draPlugins...)
	}
	for _, name := range wanted {
		if !slices.ContainsFunc(enabled, func(p config.Plugin) bool { return p.Name == name }) {
			return nil, fmt.Errorf("plugin %q is not in kube-scheduler's default profile", name)
		}
	}
	plugins := &config.Plugins{MultiPoint: config.PluginSet{Enabled: enabled}}
	for _, name := range po.DisabledFilters {
		if !slices.Contains(podPlugins, name) {
			return nil, fmt.Errorf("cannot disable the filter of %q: not a plugin podfit runs", name)
		}
		plugins.PreFilter.Disabled = append(plugins.PreFilter.Disabled, config.Plugin{Name: name})
		plugins.Filter.Disabled = append(plugins.Filter.Disabled, config.Plugin{Name: name})
	}
	for i := range enabled {
		w, ok := po.ScoreWeights[enabled[i].Name]
		switch {
		case !ok:
		case w == 0:
			plugins.PreScore.Disabled = append(plugins.PreScore.Disabled, config.Plugin{Name: enabled[i].Name})
			plugins.Score.Disabled = append(plugins.Score.Disabled, config.Plugin{Name: enabled[i].Name})
		default:
			enabled[i].Weight = w
		}
	}
	var pluginConfig []config.PluginConfig
	for _, pc := range def.PluginConfig {
		if !keep(pc.Name) {
			continue
		}
		switch args := pc.Args.(type) {
		case *config.NodeResourcesFitArgs:
			a := args.DeepCopy()
			if po.MostAllocated {
				a.ScoringStrategy.Type = config.MostAllocated
			}
			// Node-wide amounts mean nothing for a share of a card's
			// memory by percentage: the vGPU allocation checks it per
			// card, and nodes do not advertise it.
			a.IgnoredResources = append(a.IgnoredResources, vgpu.ResourceMemoryPercentage)
			pc.Args = a
		case *config.VolumeBindingArgs:
			a := args.DeepCopy()
			if po.VolumeBindTimeout > 0 {
				a.BindTimeoutSeconds = int64(po.VolumeBindTimeout.Seconds())
			}
			if len(po.VolumeBindingShape) > 0 {
				a.Shape = po.VolumeBindingShape
			}
			pc.Args = a
		case *config.DynamicResourcesArgs:
			if po.DRAFilterTimeout != nil {
				a := args.DeepCopy()
				a.FilterTimeout = &metav1.Duration{Duration: *po.DRAFilterTimeout}
				pc.Args = a
			}
		}
		pluginConfig = append(pluginConfig, pc)
	}
	return &config.KubeSchedulerProfile{
		SchedulerName: profileName,
		Plugins:       plugins,
		PluginConfig:  pluginConfig,
	}, nil
}
