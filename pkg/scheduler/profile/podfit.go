package profile

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"

	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
)

// PodFitOptions derives how kube-scheduler's plugins are run from the
// configuration's predicates and nodeorder plugins. needed is false when
// neither is configured: the scheduler then needs no podfit evaluator.
func PodFitOptions(cfg *configv1alpha1.SchedulerConfiguration) (opts podfit.ProfileOptions, needed bool, err error) {
	opts.ScoreWeights = map[string]int32{}
	for i := range cfg.Tiers {
		for j := range cfg.Tiers[i].Plugins {
			pc := &cfg.Tiers[i].Plugins[j]
			path := field.NewPath("tiers").Index(i).Child("plugins").Index(j).Child("args")
			switch pc.Name {
			case configv1alpha1.PredicatesPlugin:
				needed = true
				args, errs := configv1alpha1.DecodePluginArgs(pc, path)
				if len(errs) > 0 {
					return opts, false, errs.ToAggregate()
				}
				if err := predicateOptions(args.(*configv1alpha1.PredicatesArgs), &opts, path); err != nil {
					return opts, false, err
				}
			case configv1alpha1.NodeOrderPlugin:
				needed = true
				args, errs := configv1alpha1.DecodePluginArgs(pc, path)
				if len(errs) > 0 {
					return opts, false, errs.ToAggregate()
				}
				if err := nodeOrderOptions(args.(*configv1alpha1.NodeOrderArgs), &opts, path); err != nil {
					return opts, false, err
				}
			}
		}
	}
	return opts, needed, nil
}

func predicateOptions(a *configv1alpha1.PredicatesArgs, opts *podfit.ProfileOptions, path *field.Path) error {
	switches := []struct {
		on     *bool
		plugin string
	}{
		{a.NodeAffinity, names.NodeAffinity},
		{a.NodePorts, names.NodePorts},
		{a.TaintToleration, names.TaintToleration},
		{a.PodAffinity, names.InterPodAffinity},
		{a.NodeVolumeLimits, names.NodeVolumeLimits},
		{a.VolumeZone, names.VolumeZone},
		{a.PodTopologySpread, names.PodTopologySpread},
		{a.VolumeBinding, names.VolumeBinding},
	}
	for _, sw := range switches {
		if sw.on != nil && !*sw.on {
			opts.DisabledFilters = append(opts.DisabledFilters, sw.plugin)
		}
	}
	if a.DynamicResourceAllocation != nil && *a.DynamicResourceAllocation {
		opts.DynamicResources = true
		if a.DRAFilterTimeout != nil {
			d := a.DRAFilterTimeout.Duration
			opts.DRAFilterTimeout = &d
		}
	}
	if a.VolumeBindingTimeout != nil {
		opts.VolumeBindTimeout = a.VolumeBindingTimeout.Duration
	}
	if a.VolumeBindingWeight != nil {
		opts.ScoreWeights[names.VolumeBinding] = *a.VolumeBindingWeight
	}
	for _, p := range a.VolumeBindingShape {
		opts.VolumeBindingShape = append(opts.VolumeBindingShape, config.UtilizationShapePoint{Utilization: p.Utilization, Score: p.Score})
	}
	return nil
}

func nodeOrderOptions(a *configv1alpha1.NodeOrderArgs, opts *podfit.ProfileOptions, path *field.Path) error {
	least, most := *a.LeastRequestedWeight, *a.MostRequestedWeight
	switch {
	case least > 0 && most > 0:
		return fmt.Errorf("%s: leastRequestedWeight and mostRequestedWeight are both set; kube-scheduler's resource score favours either empty or full nodes, set one of them to 0",
			path)
	case most > 0:
		opts.MostAllocated = true
		opts.ScoreWeights[names.NodeResourcesFit] = most
	default:
		opts.ScoreWeights[names.NodeResourcesFit] = least
	}
	opts.ScoreWeights[names.NodeAffinity] = *a.NodeAffinityWeight
	opts.ScoreWeights[names.InterPodAffinity] = *a.PodAffinityWeight
	opts.ScoreWeights[names.NodeResourcesBalancedAllocation] = *a.BalancedResourceWeight
	opts.ScoreWeights[names.TaintToleration] = *a.TaintTolerationWeight
	opts.ScoreWeights[names.ImageLocality] = *a.ImageLocalityWeight
	opts.ScoreWeights[names.PodTopologySpread] = *a.PodTopologySpreadWeight
	return nil
}
