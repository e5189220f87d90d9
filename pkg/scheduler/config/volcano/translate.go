// Package volcano translates Volcano's scheduler configuration file,
// volcano-scheduler.conf, into Caldera's typed configuration
// (scheduler.config.caldera.sh/v1alpha1).
//
// A Volcano file has four top-level keys: actions (a comma-separated
// string), tiers (lists of plugins, each with switches and a flat map of
// arguments), configurations (arguments of actions) and metrics (where node
// usage metrics come from). Every key is mapped to a typed field; a key that
// has no mapping is an error naming it, where Volcano would ignore it
// silently. docs/scheduler-configuration.md lists every key.
package volcano

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
)

// Origins maps field paths of a translated configuration to the places in
// the Volcano file they came from, so that errors found later, by
// validation, point at what the user wrote.
type Origins map[string]string

func (o Origins) record(ours, theirs *field.Path) {
	if ours.String() != theirs.String() {
		o[ours.String()] = theirs.String()
	}
}

// Remap returns errs with every recorded field path replaced by its origin
// in the Volcano file.
func (o Origins) Remap(errs field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		if from, ok := o[e.Field]; ok {
			c := *e
			c.Field = from
			e = &c
		}
		out = append(out, e)
	}
	return out
}

// Top-level keys of a Volcano file.
const (
	actionsKey        = "actions"
	tiersKey          = "tiers"
	configurationsKey = "configurations"
	metricsKey        = "metrics"
)

// Translate converts a Volcano configuration, given as JSON (YAML converted
// to JSON), into a SchedulerConfiguration. The result is neither defaulted
// nor validated; errors are those of the file's shape and of plugin and
// action arguments, with Volcano's field paths. Unless the document is not
// a mapping at all, the configuration is returned even with errors, holding
// everything that did translate, so that the caller can validate it and
// report every problem at once.
func Translate(data []byte) (*v1alpha1.SchedulerConfiguration, Origins, field.ErrorList) {
	t := &translator{
		cfg:     &v1alpha1.SchedulerConfiguration{},
		origins: Origins{},
	}
	t.cfg.APIVersion = v1alpha1.SchemeGroupVersion.String()
	t.cfg.Kind = v1alpha1.Kind

	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, field.ErrorList{field.Invalid(nil, field.OmitValueType{}, err.Error())}
	}
	top, ferr := toMap(doc, nil)
	if ferr != nil || top == nil {
		return nil, nil, field.ErrorList{field.Invalid(nil, field.OmitValueType{}, "a Volcano scheduler configuration must be a mapping with actions and tiers")}
	}
	for _, key := range sortedKeys(top) {
		v := top[key]
		p := field.NewPath(key)
		switch key {
		case actionsKey:
			t.actions(v, p)
		case tiersKey:
			t.tiers(v, p)
		case configurationsKey:
			t.configurations(v, p)
		case metricsKey:
			t.metrics(v, p)
		default:
			t.unknownTopLevel(key, p)
		}
	}
	return t.cfg, t.origins, t.errs
}

type translator struct {
	cfg     *v1alpha1.SchedulerConfiguration
	origins Origins
	errs    field.ErrorList
}

func (t *translator) add(err *field.Error) {
	if err != nil {
		t.errs = append(t.errs, err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// unknownKey reports a key the translation has no mapping for.
func (t *translator) unknownKey(p *field.Path, key string, known []string, what string) {
	detail := "unknown " + what
	if s, ok := v1alpha1.Suggest(key, known); ok {
		detail += fmt.Sprintf("; did you mean %q?", s)
	} else if len(known) > 0 {
		detail += fmt.Sprintf(" (known: %s)", quoteAll(known))
	}
	t.add(field.Forbidden(p, detail))
}

func (t *translator) unknownTopLevel(key string, p *field.Path) {
	if slices.Contains(calderaOnlyFields(), key) {
		t.add(field.Forbidden(p, fmt.Sprintf(
			"not a Volcano key; a Caldera configuration must start with apiVersion: %s and kind: %s",
			v1alpha1.SchemeGroupVersion, v1alpha1.Kind)))
		return
	}
	t.unknownKey(p, key, []string{actionsKey, configurationsKey, metricsKey, tiersKey}, "field")
}

// calderaOnlyFields lists top-level fields of Caldera's format that Volcano
// files do not have, to recognise a Caldera file without apiVersion.
func calderaOnlyFields() []string {
	var names []string
	rt := reflect.TypeFor[v1alpha1.SchedulerConfiguration]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name != "" && name != actionsKey && name != tiersKey {
			names = append(names, name)
		}
	}
	return names
}

func (t *translator) actions(v any, p *field.Path) {
	names, err := toNames(v, p)
	if err != nil {
		t.add(field.Invalid(p, display(v), `must be a comma-separated list of actions, such as "enqueue, allocate, backfill"`))
		return
	}
	t.cfg.Actions = names
	for i := range names {
		t.origins.record(p.Index(i), p)
	}
}

func (t *translator) tiers(v any, p *field.Path) {
	tiers, err := toList(v, p)
	if err != nil {
		t.add(err)
		return
	}
	for i, tv := range tiers {
		tp := p.Index(i)
		tier, err := toMap(tv, tp)
		if err != nil {
			t.add(err)
			continue
		}
		var out v1alpha1.Tier
		for _, key := range sortedKeys(tier) {
			if key != "plugins" {
				t.unknownKey(tp.Child(key), key, []string{"plugins"}, "field")
				continue
			}
			plugins, err := toList(tier[key], tp.Child(key))
			if err != nil {
				t.add(err)
				continue
			}
			for j, pv := range plugins {
				if pc, ok := t.plugin(pv, tp.Child(key).Index(j)); ok {
					out.Plugins = append(out.Plugins, pc)
				}
			}
		}
		t.cfg.Tiers = append(t.cfg.Tiers, out)
	}
}

// switchFields maps the JSON name of every extension point switch of
// PluginConfig, which are Volcano's key names, to its field index.
func switchFields() map[string]int {
	fields := map[string]int{}
	rt := reflect.TypeFor[v1alpha1.PluginConfig]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Type != reflect.TypeFor[*bool]() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fields[name] = i
	}
	return fields
}

func (t *translator) plugin(v any, p *field.Path) (v1alpha1.PluginConfig, bool) {
	var pc v1alpha1.PluginConfig
	m, err := toMap(v, p)
	if err != nil {
		t.add(err)
		return pc, false
	}
	switches := switchFields()
	known := append([]string{"name", "arguments"}, sortedKeys(switches)...)
	if nv, ok := m["name"]; ok {
		name, err := toString(nv, p.Child("name"))
		t.add(err)
		pc.Name = name
	}
	for _, key := range sortedKeys(m) {
		kp := p.Child(key)
		switch idx, isSwitch := switches[key]; {
		case key == "name":
		case key == "arguments":
			t.pluginArgs(&pc, m[key], kp, p.Child("args"))
		case isSwitch:
			b, err := toBool(m[key], kp)
			if err != nil {
				t.add(err)
				continue
			}
			reflect.ValueOf(&pc).Elem().Field(idx).Set(reflect.ValueOf(&b))
		default:
			t.unknownKey(kp, key, known, "field")
		}
	}
	return pc, true
}

// argsTranslator maps one plugin's Volcano arguments to its typed
// arguments. from locates the arguments in the Volcano file, to in the
// translated configuration.
type argsTranslator func(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs

// argsTranslators returns the translator of every plugin with typed
// arguments.
func argsTranslators() map[string]argsTranslator {
	return map[string]argsTranslator{
		v1alpha1.BinpackPlugin:              translateBinpack,
		v1alpha1.NodeOrderPlugin:            translateNodeOrder,
		v1alpha1.OvercommitPlugin:           translateOvercommit,
		v1alpha1.PredicatesPlugin:           translatePredicates,
		v1alpha1.NetworkTopologyAwarePlugin: translateNetworkTopologyAware,
		v1alpha1.NodeGroupPlugin:            translateNodeGroup,
		v1alpha1.ResourceStrategyFitPlugin:  translateResourceStrategyFit,
		v1alpha1.TaskTopologyPlugin:         translateTaskTopology,
		v1alpha1.NUMAAwarePlugin:            translateNUMAAware,
		v1alpha1.DeviceSharePlugin:          translateDeviceShare,
		v1alpha1.UsagePlugin:                translateUsage,
	}
}

func (t *translator) pluginArgs(pc *v1alpha1.PluginConfig, v any, from, to *field.Path) {
	args, err := toMap(v, from)
	if err != nil {
		t.add(err)
		return
	}
	if len(args) == 0 {
		return
	}
	var out any = args
	switch tr, typed := argsTranslators()[pc.Name]; {
	case typed:
		out = tr(t, args, from, to)
	case v1alpha1.TakesNoArgs(pc.Name):
		for _, key := range sortedKeys(args) {
			t.add(field.Forbidden(from.Key(key), fmt.Sprintf("plugin %s takes no arguments", pc.Name)))
		}
		return
	}
	// Plugins without a typed translation (not available in this version,
	// or unknown, which validation reports) keep their arguments as given.
	raw, mErr := json.Marshal(out)
	if mErr != nil {
		t.add(field.InternalError(from, mErr))
		return
	}
	pc.Args.Raw = raw
}

func (t *translator) configurations(v any, p *field.Path) {
	list, err := toList(v, p)
	if err != nil {
		t.add(err)
		return
	}
	seen := map[string]bool{}
	for i, cv := range list {
		cp := p.Index(i)
		m, err := toMap(cv, cp)
		if err != nil {
			t.add(err)
			continue
		}
		name, _ := m["name"].(string)
		for _, key := range sortedKeys(m) {
			if key != "name" && key != "arguments" {
				t.unknownKey(cp.Child(key), key, []string{"arguments", "name"}, "field")
			}
		}
		switch {
		case name == "":
			t.add(field.Required(cp.Child("name"), "name the action the arguments are for"))
			continue
		case !slices.Contains(v1alpha1.KnownActions(), name):
			t.unknownKey(cp.Child("name"), name, v1alpha1.KnownActions(), "action")
			continue
		case seen[name]:
			t.add(field.Duplicate(cp.Child("name"), name))
			continue
		}
		seen[name] = true
		args, err := toMap(m["arguments"], cp.Child("arguments"))
		if err != nil {
			t.add(err)
			continue
		}
		t.actionArgs(name, args, cp.Child("arguments"))
	}
}

// Volcano action argument keys.
const (
	predicateErrorCacheKey           = "predicateErrorCacheEnable"
	enableTopologyAwarePreemptionKey = "enableTopologyAwarePreemption"
	topologyAwarePreemptWorkerNumKey = "topologyAwarePreemptWorkerNum"
	minCandidateNodesPercentageKey   = "minCandidateNodesPercentage"
	minCandidateNodesAbsoluteKey     = "minCandidateNodesAbsolute"
	maxCandidateNodesAbsoluteKey     = "maxCandidateNodesAbsolute"
	legacyOvercommitFactorKey        = "overcommit-factor"
)

func (t *translator) actionArgs(action string, args map[string]any, from *field.Path) {
	var known []string
	switch action {
	case v1alpha1.AllocateAction, v1alpha1.BackfillAction, v1alpha1.ReclaimAction:
		known = []string{predicateErrorCacheKey}
	case v1alpha1.PreemptAction:
		known = []string{predicateErrorCacheKey, enableTopologyAwarePreemptionKey, topologyAwarePreemptWorkerNumKey,
			minCandidateNodesPercentageKey, minCandidateNodesAbsoluteKey, maxCandidateNodesAbsoluteKey}
	}
	pre := &t.cfg.Preemption
	to := field.NewPath("preemption")
	for _, key := range sortedKeys(args) {
		v := args[key]
		kp := from.Key(key)
		if !slices.Contains(known, key) {
			if action == v1alpha1.EnqueueAction && key == legacyOvercommitFactorKey {
				t.add(field.Forbidden(kp, "old Volcano releases read overcommit-factor here; set it in the arguments of the overcommit plugin"))
				continue
			}
			t.unknownKey(kp, key, known, "argument of action "+action)
			continue
		}
		switch key {
		case predicateErrorCacheKey:
			// A cache of filter failures: it changes how fast nodes are
			// filtered, not which nodes pass, so Caldera accepts the key and
			// needs no setting for it.
			_, err := toBool(v, kp)
			t.add(err)
		case enableTopologyAwarePreemptionKey:
			pre.TopologyAware = parsed(t, v, kp, to.Child("topologyAware"), toBool)
		case topologyAwarePreemptWorkerNumKey:
			pre.Workers = parsed(t, v, kp, to.Child("workers"), toInt32)
		case minCandidateNodesPercentageKey:
			pre.MinCandidateNodesPercentage = parsed(t, v, kp, to.Child("minCandidateNodesPercentage"), toInt32)
		case minCandidateNodesAbsoluteKey:
			pre.MinCandidateNodesAbsolute = parsed(t, v, kp, to.Child("minCandidateNodesAbsolute"), toInt32)
		case maxCandidateNodesAbsoluteKey:
			pre.MaxCandidateNodesAbsolute = parsed(t, v, kp, to.Child("maxCandidateNodesAbsolute"), toInt32)
		}
	}
}

func (t *translator) metrics(v any, p *field.Path) {
	m, err := toMap(v, p)
	if err != nil {
		t.add(err)
		return
	}
	if len(m) == 0 {
		return
	}
	ms := &v1alpha1.MetricsSourceConfiguration{}
	to := field.NewPath("metricsSource")
	for _, key := range sortedKeys(m) {
		kp := p.Child(key)
		switch key {
		case "type":
			s, err := toString(m[key], kp)
			t.add(err)
			ms.Type = s
			t.origins.record(to.Child("type"), kp)
		case "address":
			s, err := toString(m[key], kp)
			t.add(err)
			ms.Address = s
			t.origins.record(to.Child("address"), kp)
		case "interval":
			d, err := toDuration(m[key], kp)
			t.add(err)
			ms.Interval = &metav1.Duration{Duration: d}
			t.origins.record(to.Child("interval"), kp)
		default:
			t.unknownKey(kp, key, []string{"address", "interval", "type"}, "field")
		}
	}
	if _, ok := m["address"]; !ok {
		t.origins.record(to.Child("address"), p.Child("address"))
	}
	t.cfg.MetricsSource = ms
}
