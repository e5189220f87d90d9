package v1alpha1

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateSchedulerConfiguration checks a defaulted configuration against
// the plugins and actions reg implements. Every problem is reported, each
// with the path of the field at fault.
func ValidateSchedulerConfiguration(cfg *SchedulerConfiguration, reg Registry) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateSchedulerNames(cfg.SchedulerNames, field.NewPath("schedulerNames"))...)
	errs = append(errs, validateActions(cfg.Actions, reg, field.NewPath("actions"))...)
	errs = append(errs, validateTiers(cfg.Tiers, reg, field.NewPath("tiers"))...)
	errs = append(errs, validatePreemption(&cfg.Preemption, field.NewPath("preemption"))...)
	errs = append(errs, validateCycle(&cfg.Cycle, field.NewPath("cycle"))...)
	errs = append(errs, validateBinder(&cfg.Binder, field.NewPath("binder"))...)
	errs = append(errs, validateNodeSampling(&cfg.NodeSampling, field.NewPath("nodeSampling"))...)
	errs = append(errs, validateSharding(&cfg.Sharding, field.NewPath("sharding"))...)
	errs = append(errs, validateFastLane(&cfg.FastLane, cfg.SchedulerNames, field.NewPath("fastLane"))...)
	if cfg.MetricsSource != nil {
		errs = append(errs, validateMetricsSource(cfg.MetricsSource, field.NewPath("metricsSource"))...)
	}
	errs = append(errs, validateClientConnection(&cfg.ClientConnection, field.NewPath("clientConnection"))...)
	errs = append(errs, validateLeaderElection(&cfg.LeaderElection, field.NewPath("leaderElection"))...)
	errs = append(errs, validateBindAddress(cfg.HealthzBindAddress, field.NewPath("healthzBindAddress"))...)
	errs = append(errs, validateBindAddress(cfg.MetricsBindAddress, field.NewPath("metricsBindAddress"))...)
	return errs
}

func validateSharding(s *ShardingConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	modes := []string{ShardingNone, ShardingSoft, ShardingHard}
	if !slices.Contains(modes, s.Mode) {
		errs = append(errs, field.NotSupported(path.Child("mode"), s.Mode, modes))
	}
	if s.ShardName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.ShardName) {
			errs = append(errs, field.Invalid(path.Child("shardName"), s.ShardName, msg))
		}
	}
	return errs
}

func validateFastLane(f *FastLaneConfiguration, schedulerNames []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := path.Child("schedulerNames")
	for i, n := range f.SchedulerNames {
		if slices.Contains(schedulerNames, n) {
			errs = append(errs, field.Invalid(names.Index(i), n, "already in the top-level schedulerNames: a name is either the scheduling cycle's or the fast lane's"))
		}
	}
	if len(f.SchedulerNames) > 0 {
		errs = append(errs, validateSchedulerNames(f.SchedulerNames, names)...)
	}
	seen := sets.New[string]()
	for i, q := range f.Queues {
		p := path.Child("queues").Index(i)
		if q == "" {
			errs = append(errs, field.Required(p, "name a queue"))
		}
		if seen.Has(q) {
			errs = append(errs, field.Duplicate(p, q))
		}
		seen.Insert(q)
	}
	if f.Workers != nil && (*f.Workers < 1 || *f.Workers > 64) {
		errs = append(errs, field.Invalid(path.Child("workers"), *f.Workers, "must be between 1 and 64"))
	}
	return errs
}

func validateSchedulerNames(names []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(names) == 0 {
		errs = append(errs, field.Required(path, "name at least one scheduler"))
	}
	seen := sets.New[string]()
	for i, n := range names {
		p := path.Index(i)
		for _, msg := range validation.IsDNS1123Subdomain(n) {
			errs = append(errs, field.Invalid(p, n, msg))
		}
		if seen.Has(n) {
			errs = append(errs, field.Duplicate(p, n))
		}
		seen.Insert(n)
	}
	return errs
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// unknownName reports a name outside the known vocabulary, with a
// suggestion when it looks like a misspelling of a known name.
func unknownName(path *field.Path, name, what string, known []string) *field.Error {
	known = slices.Sorted(slices.Values(known))
	detail := "unknown " + what
	if s, ok := Suggest(name, known); ok {
		detail += fmt.Sprintf("; did you mean %q?", s)
	}
	detail += fmt.Sprintf(" (known %ss: %s)", what, quoteAll(known))
	return field.Invalid(path, name, detail)
}

func validateActions(actions []string, reg Registry, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(actions) == 0 {
		errs = append(errs, field.Required(path, "name at least one action"))
	}
	seen := sets.New[string]()
	for i, a := range actions {
		p := path.Index(i)
		switch {
		case !slices.Contains(KnownActions(), a):
			errs = append(errs, unknownName(p, a, "action", KnownActions()))
		case !reg.HasAction(a):
			errs = append(errs, field.Invalid(p, a, "action is not available in this version of Caldera"))
		case seen.Has(a):
			errs = append(errs, field.Duplicate(p, a))
		}
		seen.Insert(a)
	}
	return errs
}

// pluginRef locates a plugin in the tiers.
//
// +kubebuilder:object:generate=false
type pluginRef struct {
	path   *field.Path
	config *PluginConfig
	// order is the plugin's position counted across all tiers.
	order int
}

func validateTiers(tiers []Tier, reg Registry, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]pluginRef{}
	for i := range tiers {
		tp := path.Index(i).Child("plugins")
		if len(tiers[i].Plugins) == 0 {
			errs = append(errs, field.Required(tp, "a tier needs at least one plugin"))
		}
		for j := range tiers[i].Plugins {
			p := &tiers[i].Plugins[j]
			pp := tp.Index(j)
			errs = append(errs, validatePlugin(p, reg, pp)...)
			if p.Name == "" {
				continue
			}
			if _, dup := seen[p.Name]; dup {
				errs = append(errs, field.Duplicate(pp.Child("name"), p.Name))
				continue
			}
			seen[p.Name] = pluginRef{path: pp, config: p, order: len(seen)}
		}
	}
	errs = append(errs, validateQueuePlugins(seen)...)
	return errs
}

func validatePlugin(p *PluginConfig, reg Registry, path *field.Path) field.ErrorList {
	np := path.Child("name")
	switch {
	case p.Name == "":
		return field.ErrorList{field.Required(np, "")}
	case !slices.Contains(KnownPlugins(), p.Name):
		return field.ErrorList{unknownName(np, p.Name, "plugin", KnownPlugins())}
	case !reg.HasPlugin(p.Name):
		return field.ErrorList{field.Invalid(np, p.Name, fmt.Sprintf(
			"plugin is not available in this version of Caldera (available plugins: %s)", quoteAll(reg.PluginNames())))}
	}
	var errs field.ErrorList
	if p.EnableHierarchy != nil && p.Name != DRFPlugin && p.Name != CapacityPlugin && p.Name != NodeGroupPlugin {
		errs = append(errs, field.Invalid(path.Child("enableHierarchy"), *p.EnableHierarchy, "only drf, capacity and nodegroup have hierarchical queues"))
	}
	ap := path.Child("args")
	if TakesNoArgs(p.Name) {
		if !emptyArgs(p.Args.Raw) {
			errs = append(errs, field.Invalid(ap, string(p.Args.Raw), fmt.Sprintf("plugin %s takes no arguments", p.Name)))
		}
		return errs
	}
	args, decodeErrs := DecodePluginArgs(p, ap)
	errs = append(errs, decodeErrs...)
	if args != nil {
		errs = append(errs, args.Validate(ap)...)
	}
	return errs
}

// validateQueuePlugins rejects plugins that would divide the cluster among
// queues twice: proportion with capacity, and proportion with hierarchical
// drf (Volcano refuses the latter too).
func validateQueuePlugins(plugins map[string]pluginRef) field.ErrorList {
	prop, ok := plugins[ProportionPlugin]
	if !ok {
		return nil
	}
	var errs field.ErrorList
	if c, ok := plugins[CapacityPlugin]; ok {
		later := later(prop, c)
		errs = append(errs, field.Invalid(later.path.Child("name"), later.config.Name,
			"proportion and capacity both divide the cluster among queues; enable only one of them"))
	}
	if d, ok := plugins[DRFPlugin]; ok && d.config.HierarchyEnabled() {
		errs = append(errs, field.Invalid(d.path.Child("enableHierarchy"), true,
			"drf with hierarchy and proportion both divide the cluster among queues; disable one of them"))
	}
	return errs
}

// later returns whichever of a and b comes later in the tiers.
func later(a, b pluginRef) pluginRef {
	if a.order < b.order {
		return b
	}
	return a
}

func validatePositiveDuration(d *metav1.Duration, path *field.Path) field.ErrorList {
	if d != nil && d.Duration <= 0 {
		return field.ErrorList{field.Invalid(path, d.Duration.String(), "must be positive")}
	}
	return nil
}

func validateNonNegativeDuration(d *metav1.Duration, path *field.Path) field.ErrorList {
	if d != nil && d.Duration < 0 {
		return field.ErrorList{field.Invalid(path, d.Duration.String(), "must not be negative")}
	}
	return nil
}

func validateAtLeast(v *int32, least int32, path *field.Path) field.ErrorList {
	if v != nil && *v < least {
		return field.ErrorList{field.Invalid(path, *v, fmt.Sprintf("must be at least %d", least))}
	}
	return nil
}

func validatePercentage(v *int32, least int32, path *field.Path) field.ErrorList {
	if v != nil && (*v < least || *v > 100) {
		return field.ErrorList{field.Invalid(path, *v, fmt.Sprintf("must be between %d and 100", least))}
	}
	return nil
}

func validatePreemption(p *PreemptionConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateAtLeast(p.Workers, 1, path.Child("workers"))...)
	errs = append(errs, validatePercentage(p.MinCandidateNodesPercentage, 0, path.Child("minCandidateNodesPercentage"))...)
	errs = append(errs, validateAtLeast(p.MinCandidateNodesAbsolute, 1, path.Child("minCandidateNodesAbsolute"))...)
	if p.MinCandidateNodesAbsolute != nil && p.MaxCandidateNodesAbsolute != nil && *p.MaxCandidateNodesAbsolute < *p.MinCandidateNodesAbsolute {
		errs = append(errs, field.Invalid(path.Child("maxCandidateNodesAbsolute"), *p.MaxCandidateNodesAbsolute, "must not be below minCandidateNodesAbsolute"))
	}
	return errs
}

func validateCycle(c *CycleConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateNonNegativeDuration(c.CoalesceWindow, path.Child("coalesceWindow"))...)
	errs = append(errs, validatePositiveDuration(c.Heartbeat, path.Child("heartbeat"))...)
	errs = append(errs, validateNonNegativeDuration(c.MaxDuration, path.Child("maxDuration"))...)
	if len(errs) == 0 && c.CoalesceWindow != nil && c.Heartbeat != nil && c.Heartbeat.Duration < c.CoalesceWindow.Duration {
		errs = append(errs, field.Invalid(path.Child("heartbeat"), c.Heartbeat.Duration.String(), "must not be below coalesceWindow"))
	}
	return errs
}

func validateBinder(b *BinderConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateAtLeast(b.Concurrency, 1, path.Child("concurrency"))...)
	errs = append(errs, validatePositiveDuration(b.Timeout, path.Child("timeout"))...)
	return errs
}

func validateNodeSampling(n *NodeSamplingConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validatePercentage(n.PercentageOfNodesToFind, 0, path.Child("percentageOfNodesToFind"))...)
	errs = append(errs, validateAtLeast(n.MinNodesToFind, 1, path.Child("minNodesToFind"))...)
	return errs
}

func validateMetricsSource(m *MetricsSourceConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	types := []string{MetricsSourcePrometheus, MetricsSourcePrometheusAdaptor, MetricsSourceElasticsearch}
	switch {
	case !slices.Contains(types, m.Type):
		errs = append(errs, field.NotSupported(path.Child("type"), m.Type, types))
	case m.Type != MetricsSourcePrometheus:
		errs = append(errs, field.Invalid(path.Child("type"), m.Type,
			"not available in this version of Caldera: use prometheus, or leave metricsSource out and the usage plugin reads the nodes' NodeUsage from caldera-agent"))
	}
	if m.Address == "" {
		errs = append(errs, field.Required(path.Child("address"), ""))
	}
	errs = append(errs, validatePositiveDuration(m.Interval, path.Child("interval"))...)
	return errs
}

func validateClientConnection(c *ClientConnectionConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.QPS != nil && *c.QPS < 0 {
		errs = append(errs, field.Invalid(path.Child("qps"), *c.QPS, "must not be negative"))
	}
	errs = append(errs, validateAtLeast(c.Burst, 0, path.Child("burst"))...)
	return errs
}

func validateLeaderElection(le *LeaderElectionConfiguration, path *field.Path) field.ErrorList {
	if le.LeaderElect == nil || !*le.LeaderElect {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validatePositiveDuration(le.LeaseDuration, path.Child("leaseDuration"))...)
	errs = append(errs, validatePositiveDuration(le.RenewDeadline, path.Child("renewDeadline"))...)
	errs = append(errs, validatePositiveDuration(le.RetryPeriod, path.Child("retryPeriod"))...)
	if len(errs) == 0 && le.LeaseDuration != nil && le.RenewDeadline != nil && le.RetryPeriod != nil {
		if le.RenewDeadline.Duration >= le.LeaseDuration.Duration {
			errs = append(errs, field.Invalid(path.Child("renewDeadline"), le.RenewDeadline.Duration.String(), "must be below leaseDuration"))
		}
		if le.RetryPeriod.Duration >= le.RenewDeadline.Duration {
			errs = append(errs, field.Invalid(path.Child("retryPeriod"), le.RetryPeriod.Duration.String(), "must be below renewDeadline"))
		}
	}
	if le.ResourceLock != LeasesResourceLock {
		errs = append(errs, field.NotSupported(path.Child("resourceLock"), le.ResourceLock, []string{LeasesResourceLock}))
	}
	for _, msg := range validation.IsDNS1123Subdomain(le.ResourceName) {
		errs = append(errs, field.Invalid(path.Child("resourceName"), le.ResourceName, msg))
	}
	for _, msg := range validation.IsDNS1123Label(le.ResourceNamespace) {
		errs = append(errs, field.Invalid(path.Child("resourceNamespace"), le.ResourceNamespace, msg))
	}
	return errs
}

// validateBindAddress accepts "0" (disabled) or host:port with a port
// number, where host may be empty.
func validateBindAddress(addr string, path *field.Path) field.ErrorList {
	if addr == "0" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return field.ErrorList{field.Invalid(path, addr, `must be "host:port", ":port" or "0" to disable`)}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return field.ErrorList{field.Invalid(path, addr, "port must be a number from 0 to 65535")}
	}
	return nil
}
