package volcano

import (
	"fmt"
	"math"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/scheduler/apis/config/v1alpha1"
)

// The helpers below parse one argument, record where the typed field came
// from, and collect the error if the value does not parse.

func (t *translator) int32Arg(v any, from, to *field.Path) *int32 {
	n, err := toInt32(v, from)
	if err != nil {
		t.add(err)
		return nil
	}
	t.origins.record(to, from)
	return &n
}

func (t *translator) boolArg(v any, from, to *field.Path) *bool {
	b, err := toBool(v, from)
	if err != nil {
		t.add(err)
		return nil
	}
	t.origins.record(to, from)
	return &b
}

func (t *translator) floatArg(v any, from, to *field.Path) *float64 {
	f, err := toFloat(v, from)
	if err != nil {
		t.add(err)
		return nil
	}
	t.origins.record(to, from)
	return &f
}

func durationPtr(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// unknownArg reports an argument key the plugin does not have.
func (t *translator) unknownArg(plugin, key string, from *field.Path, known []string) {
	t.unknownKey(from.Key(key), key, known, "argument of plugin "+plugin)
}

// resourceWeights collects Volcano's pattern of a resource list under
// listKey ("binpack.resources: nvidia.com/gpu, example.com/foo") and a
// weight per listed resource under listKey+".<name>" (default 1). It
// returns nil when no resource is listed. A weight for an unlisted resource
// is an error: Volcano would ignore it.
type resourceWeights struct {
	listKey string
	listed  []string
	weights map[string]int32
	keys    map[string]string
	values  map[string]any
}

func newResourceWeights(listKey string) *resourceWeights {
	return &resourceWeights{listKey: listKey, weights: map[string]int32{}, keys: map[string]string{}, values: map[string]any{}}
}

// take consumes key if it belongs to the pattern.
func (r *resourceWeights) take(t *translator, key string, v any, from *field.Path) bool {
	switch {
	case key == r.listKey:
		names, err := toNames(v, from.Key(key))
		t.add(err)
		r.listed = names
	case strings.HasPrefix(key, r.listKey+"."):
		name := strings.TrimPrefix(key, r.listKey+".")
		w, err := toInt32(v, from.Key(key))
		if err != nil {
			t.add(err)
			return true
		}
		r.weights[name], r.keys[name], r.values[name] = w, key, v
	default:
		return false
	}
	return true
}

func (r *resourceWeights) result(t *translator, from, to *field.Path) map[corev1.ResourceName]int32 {
	out := map[corev1.ResourceName]int32{}
	for _, name := range r.listed {
		w, ok := r.weights[name]
		if !ok {
			w = 1
		}
		out[corev1.ResourceName(name)] = w
		origin := from.Key(r.listKey)
		if key, ok := r.keys[name]; ok {
			origin = from.Key(key)
		}
		t.origins.record(to.Key(name), origin)
	}
	for _, name := range sortedKeys(r.weights) {
		if _, ok := out[corev1.ResourceName(name)]; !ok {
			t.add(field.Invalid(from.Key(r.keys[name]), display(r.values[name]),
				fmt.Sprintf("%s is not listed in %s, so this weight has no effect (Volcano ignores it); add it to %s", name, r.listKey, r.listKey)))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Volcano argument keys of the binpack plugin.
const (
	binpackWeightKey    = "binpack.weight"
	binpackCPUKey       = "binpack.cpu"
	binpackMemoryKey    = "binpack.memory"
	binpackResourcesKey = "binpack.resources"
)

func translateBinpack(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.BinpackArgs{}
	res := newResourceWeights(binpackResourcesKey)
	for _, key := range sortedKeys(args) {
		v := args[key]
		kp := from.Key(key)
		switch {
		case key == binpackWeightKey:
			a.Weight = t.int32Arg(v, kp, to.Child("weight"))
		case key == binpackCPUKey:
			a.CPU = t.int32Arg(v, kp, to.Child("cpu"))
		case key == binpackMemoryKey:
			a.Memory = t.int32Arg(v, kp, to.Child("memory"))
		case res.take(t, key, v, from):
		default:
			t.unknownArg(v1alpha1.BinpackPlugin, key, from, []string{binpackCPUKey, binpackMemoryKey, binpackResourcesKey, binpackResourcesKey + ".<name>", binpackWeightKey})
		}
	}
	a.Resources = res.result(t, from, to.Child("resources"))
	return a
}

// nodeOrderWeights maps the nodeorder plugin's Volcano keys to the JSON
// names of NodeOrderArgs.
func nodeOrderWeights() map[string]string {
	return map[string]string{
		"leastrequested.weight":    "leastRequestedWeight",
		"mostrequested.weight":     "mostRequestedWeight",
		"nodeaffinity.weight":      "nodeAffinityWeight",
		"podaffinity.weight":       "podAffinityWeight",
		"balancedresource.weight":  "balancedResourceWeight",
		"tainttoleration.weight":   "taintTolerationWeight",
		"imagelocality.weight":     "imageLocalityWeight",
		"podtopologyspread.weight": "podTopologySpreadWeight",
	}
}

func translateNodeOrder(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.NodeOrderArgs{}
	fields := map[string]**int32{
		"leastRequestedWeight":    &a.LeastRequestedWeight,
		"mostRequestedWeight":     &a.MostRequestedWeight,
		"nodeAffinityWeight":      &a.NodeAffinityWeight,
		"podAffinityWeight":       &a.PodAffinityWeight,
		"balancedResourceWeight":  &a.BalancedResourceWeight,
		"taintTolerationWeight":   &a.TaintTolerationWeight,
		"imageLocalityWeight":     &a.ImageLocalityWeight,
		"podTopologySpreadWeight": &a.PodTopologySpreadWeight,
	}
	keys := nodeOrderWeights()
	for _, key := range sortedKeys(args) {
		name, ok := keys[key]
		if !ok {
			t.unknownArg(v1alpha1.NodeOrderPlugin, key, from, sortedKeys(keys))
			continue
		}
		*fields[name] = t.int32Arg(args[key], from.Key(key), to.Child(name))
	}
	return a
}

// Volcano argument keys of the overcommit plugin.
const overcommitFactorKey = "overcommit-factor"

func translateOvercommit(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.OvercommitArgs{}
	for _, key := range sortedKeys(args) {
		v := args[key]
		kp := from.Key(key)
		switch {
		case key == overcommitFactorKey:
			a.Factor = t.floatArg(v, kp, to.Child("factor"))
		case strings.HasPrefix(key, overcommitFactorKey+"."):
			name := corev1.ResourceName(strings.TrimPrefix(key, overcommitFactorKey+"."))
			if f := t.floatArg(v, kp, to.Child("resourceFactors").Key(string(name))); f != nil {
				if a.ResourceFactors == nil {
					a.ResourceFactors = map[corev1.ResourceName]float64{}
				}
				a.ResourceFactors[name] = *f
			}
		default:
			t.unknownArg(v1alpha1.OvercommitPlugin, key, from, []string{overcommitFactorKey, overcommitFactorKey + ".<resource>"})
		}
	}
	return a
}

// Volcano argument keys of the predicates plugin.
const (
	proportionalEnableKey    = "predicate.ProportionalEnable"
	proportionalResourcesKey = "predicate.resources"
	gpuSharingEnableKey      = "predicate.GPUSharingEnable"
	gpuNumberEnableKey       = "predicate.GPUNumberEnable"
	volumeBindingTimeoutKey  = "volumebinding.bindTimeoutSeconds"
	volumeBindingWeightKey   = "volumebinding.weight"
	volumeBindingShapeKey    = "volumebinding.shape"
	draFilterTimeoutKey      = "dynamicresources.filterTimeoutSeconds"
)

// predicateSwitches maps the predicates plugin's Volcano switch keys to the
// JSON names of PredicatesArgs.
func predicateSwitches() map[string]string {
	return map[string]string{
		"predicate.NodeAffinityEnable":              "nodeAffinity",
		"predicate.NodePortsEnable":                 "nodePorts",
		"predicate.TaintTolerationEnable":           "taintToleration",
		"predicate.PodAffinityEnable":               "podAffinity",
		"predicate.NodeVolumeLimitsEnable":          "nodeVolumeLimits",
		"predicate.VolumeZoneEnable":                "volumeZone",
		"predicate.PodTopologySpreadEnable":         "podTopologySpread",
		"predicate.VolumeBindingEnable":             "volumeBinding",
		"predicate.DynamicResourceAllocationEnable": "dynamicResourceAllocation",
		"predicate.CacheEnable":                     "cache",
	}
}

func translatePredicates(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.PredicatesArgs{}
	switches := map[string]**bool{
		"nodeAffinity":              &a.NodeAffinity,
		"nodePorts":                 &a.NodePorts,
		"taintToleration":           &a.TaintToleration,
		"podAffinity":               &a.PodAffinity,
		"nodeVolumeLimits":          &a.NodeVolumeLimits,
		"volumeZone":                &a.VolumeZone,
		"podTopologySpread":         &a.PodTopologySpread,
		"volumeBinding":             &a.VolumeBinding,
		"dynamicResourceAllocation": &a.DynamicResourceAllocation,
		"cache":                     &a.Cache,
	}
	keys := predicateSwitches()
	known := append(sortedKeys(keys), proportionalEnableKey, proportionalResourcesKey,
		proportionalResourcesKey+".<name>.cpu", proportionalResourcesKey+".<name>.memory",
		gpuSharingEnableKey, gpuNumberEnableKey,
		volumeBindingTimeoutKey, volumeBindingWeightKey, volumeBindingShapeKey, draFilterTimeoutKey)

	proportional := false
	var proportionalNames []string
	reservations := newReservationKeys(proportionalResourcesKey)
	for _, key := range sortedKeys(args) {
		v := args[key]
		kp := from.Key(key)
		if name, ok := keys[key]; ok {
			*switches[name] = t.boolArg(v, kp, to.Child(name))
			continue
		}
		switch {
		case key == proportionalEnableKey:
			b, err := toBool(v, kp)
			t.add(err)
			proportional = b
		case key == proportionalResourcesKey:
			names, err := toNames(v, kp)
			t.add(err)
			proportionalNames = names
		case reservations.take(t, key, v, from):
		case key == gpuSharingEnableKey || key == gpuNumberEnableKey:
			// Old Volcano releases shared GPUs in the predicates plugin;
			// current ones do it in deviceshare. Off, the key is harmless.
			b, err := toBool(v, kp)
			t.add(err)
			if b {
				t.add(field.Invalid(kp, display(v), "GPU sharing is the deviceshare plugin's job in current Volcano releases: list deviceshare with deviceshare.GPUSharingEnable or deviceshare.GPUNumberEnable instead"))
			}
		case key == volumeBindingTimeoutKey:
			d, err := toSeconds(v, kp)
			if err != nil {
				t.add(err)
				continue
			}
			a.VolumeBindingTimeout = durationPtr(d)
			t.origins.record(to.Child("volumeBindingTimeout"), kp)
		case key == volumeBindingWeightKey:
			a.VolumeBindingWeight = t.int32Arg(v, kp, to.Child("volumeBindingWeight"))
		case key == volumeBindingShapeKey:
			a.VolumeBindingShape = t.shape(v, kp, to.Child("volumeBindingShape"))
		case key == draFilterTimeoutKey:
			d, err := toSeconds(v, kp)
			if err != nil {
				t.add(err)
				continue
			}
			a.DRAFilterTimeout = durationPtr(d)
			t.origins.record(to.Child("draFilterTimeout"), kp)
		default:
			t.unknownArg(v1alpha1.PredicatesPlugin, key, from, known)
		}
	}

	// As in Volcano, the reservations count only when the proportional
	// predicate is enabled, and only for listed resources.
	res := reservations.result(t, proportionalNames, proportionalResourcesKey, args, from)
	if proportional {
		rp := to.Child("proportional", "resources")
		a.Proportional = &v1alpha1.ProportionalPredicate{Resources: map[corev1.ResourceName]v1alpha1.ResourceReservation{}}
		for _, name := range proportionalNames {
			a.Proportional.Resources[corev1.ResourceName(name)] = res[name].out
			res[name].record(t, rp.Key(name), from)
		}
		t.origins.record(rp, from.Key(proportionalResourcesKey))
	}
	return a
}

// reservationKeys collects Volcano's "<prefix>.<name>.cpu" (cores per
// unit) and "<prefix>.<name>.memory" (gigabytes, 10^9 bytes, per unit)
// keys.
type reservationKeys struct {
	prefix string
	byName map[string]*reservationKey
}

type reservationKey struct {
	cpu, memory       *float64
	cpuKey, memoryKey string
}

func newReservationKeys(prefix string) *reservationKeys {
	return &reservationKeys{prefix: prefix, byName: map[string]*reservationKey{}}
}

// take consumes key if it is one of the pattern's.
func (r *reservationKeys) take(t *translator, key string, v any, from *field.Path) bool {
	rest, ok := strings.CutPrefix(key, r.prefix+".")
	if !ok {
		return false
	}
	dot := strings.LastIndexByte(rest, '.')
	if dot <= 0 || (rest[dot+1:] != "cpu" && rest[dot+1:] != "memory") {
		return false
	}
	name, kind := rest[:dot], rest[dot+1:]
	f, err := toFloat(v, from.Key(key))
	if err != nil {
		t.add(err)
		return true
	}
	k := r.byName[name]
	if k == nil {
		k = &reservationKey{}
		r.byName[name] = k
	}
	if kind == "cpu" {
		k.cpu, k.cpuKey = &f, key
	} else {
		k.memory, k.memoryKey = &f, key
	}
	return true
}

// reservation is one listed resource's translated reservation.
type reservation struct {
	out v1alpha1.ResourceReservation
	key *reservationKey
	// listKey is the key that lists the resource.
	listKey string
}

// record notes where the reservation's values came from.
func (r *reservation) record(t *translator, to, from *field.Path) {
	t.origins.record(to, from.Key(r.listKey))
	if r.key == nil {
		return
	}
	if r.key.cpu != nil {
		t.origins.record(to.Child("cpu"), from.Key(r.key.cpuKey))
	}
	if r.key.memory != nil {
		t.origins.record(to.Child("memory"), from.Key(r.key.memoryKey))
	}
}

// result returns the reservations of the listed resources (unset values
// stay unset) and reports values given for resources not listed, which
// Volcano ignores.
func (r *reservationKeys) result(t *translator, listed []string, listKey string, args map[string]any, from *field.Path) map[string]*reservation {
	out := map[string]*reservation{}
	for _, name := range listed {
		res := &reservation{listKey: listKey, key: r.byName[name]}
		if k := res.key; k != nil {
			if k.cpu != nil {
				res.out.CPU = resource.NewMilliQuantity(int64(math.Round(*k.cpu*1000)), resource.DecimalSI)
			}
			if k.memory != nil {
				res.out.Memory = resource.NewQuantity(int64(math.Round(*k.memory*1e9)), resource.DecimalSI)
			}
		}
		out[name] = res
	}
	for _, name := range sortedKeys(r.byName) {
		if _, ok := out[name]; ok {
			continue
		}
		k := r.byName[name]
		key := k.cpuKey
		if key == "" {
			key = k.memoryKey
		}
		t.add(field.Invalid(from.Key(key), display(args[key]),
			fmt.Sprintf("%s is not listed in %s, so this value has no effect (Volcano ignores it); add it to %s", name, listKey, listKey)))
	}
	return out
}

// shape reads volumebinding.shape: a list of {utilization, score}.
func (t *translator) shape(v any, from, to *field.Path) []v1alpha1.UtilizationShapePoint {
	list, err := toList(v, from)
	if err != nil {
		t.add(err)
		return nil
	}
	var out []v1alpha1.UtilizationShapePoint
	for i, pv := range list {
		pp := from.Index(i)
		m, err := toMap(pv, pp)
		if err != nil {
			t.add(err)
			continue
		}
		var pt v1alpha1.UtilizationShapePoint
		for _, key := range sortedKeys(m) {
			switch key {
			case "utilization":
				if n := t.int32Arg(m[key], pp.Child(key), to.Index(i).Child(key)); n != nil {
					pt.Utilization = *n
				}
			case "score":
				if n := t.int32Arg(m[key], pp.Child(key), to.Index(i).Child(key)); n != nil {
					pt.Score = *n
				}
			default:
				t.unknownKey(pp.Child(key), key, []string{"score", "utilization"}, "field")
			}
		}
		out = append(out, pt)
	}
	return out
}

// Volcano argument keys of the network-topology-aware plugin.
const (
	ntaWeightKey          = "weight"
	ntaBinpackCPUKey      = "hypernode.binpack.cpu"
	ntaBinpackMemoryKey   = "hypernode.binpack.memory"
	ntaBinpackResources   = "hypernode.binpack.resources"
	ntaNormalPodEnableKey = "hypernode.binpack.normal-pod.enable"
	ntaNormalPodFadingKey = "hypernode.binpack.normal-pod.fading"
)

func translateNetworkTopologyAware(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.NetworkTopologyAwareArgs{}
	res := newResourceWeights(ntaBinpackResources)
	for _, key := range sortedKeys(args) {
		v := args[key]
		kp := from.Key(key)
		switch {
		case key == ntaWeightKey:
			a.Weight = t.int32Arg(v, kp, to.Child("weight"))
		case key == ntaBinpackCPUKey:
			a.BinpackCPU = t.int32Arg(v, kp, to.Child("binpackCPU"))
		case key == ntaBinpackMemoryKey:
			a.BinpackMemory = t.int32Arg(v, kp, to.Child("binpackMemory"))
		case key == ntaNormalPodEnableKey:
			a.NormalPodBinpack = t.boolArg(v, kp, to.Child("normalPodBinpack"))
		case key == ntaNormalPodFadingKey:
			a.NormalPodFading = t.floatArg(v, kp, to.Child("normalPodFading"))
		case res.take(t, key, v, from):
		default:
			t.unknownArg(v1alpha1.NetworkTopologyAwarePlugin, key, from, []string{ntaBinpackCPUKey, ntaBinpackMemoryKey,
				ntaBinpackResources, ntaBinpackResources + ".<name>", ntaNormalPodEnableKey, ntaNormalPodFadingKey, ntaWeightKey})
		}
	}
	a.BinpackResources = res.result(t, from, to.Child("binpackResources"))
	return a
}

// Volcano argument keys of the nodegroup plugin.
const (
	ngStrictKey         = "strict"
	ngPreferredOrderKey = "enablePreferredOrder"
)

func translateNodeGroup(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.NodeGroupArgs{}
	for _, key := range sortedKeys(args) {
		v := args[key]
		kp := from.Key(key)
		switch key {
		case ngStrictKey:
			a.Strict = t.boolArg(v, kp, to.Child("strict"))
		case ngPreferredOrderKey:
			a.EnablePreferredOrder = t.boolArg(v, kp, to.Child("enablePreferredOrder"))
		default:
			t.unknownArg(v1alpha1.NodeGroupPlugin, key, from, []string{ngPreferredOrderKey, ngStrictKey})
		}
	}
	return a
}

// Volcano argument key of the task-topology plugin.
const ttWeightKey = "task-topology.weight"

func translateTaskTopology(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.TaskTopologyArgs{}
	for _, key := range sortedKeys(args) {
		if key != ttWeightKey {
			t.unknownArg(v1alpha1.TaskTopologyPlugin, key, from, []string{ttWeightKey})
			continue
		}
		a.Weight = t.int32Arg(args[key], from.Key(key), to.Child("weight"))
	}
	return a
}

// Volcano argument keys of the resource-strategy-fit plugin.
const (
	rsfWeightKey          = "resourceStrategyFitWeight"
	rsfResourcesKey       = "resources"
	sraPolicyKey          = "sra.policy"
	sraResourcesKey       = "sra.resources"
	sraRetentionPrefix    = "sra.retention"
	sraRetentionWeightKey = "sra.retention.weight"
	sraProportionalPrefix = "sra.proportional"
)

func translateResourceStrategyFit(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.ResourceStrategyFitArgs{}
	var sraPolicy *string
	var sraNames []string
	retention := map[string]int32{}
	retentionKeys := map[string]string{}
	proportional := newReservationKeys(sraProportionalPrefix)
	for _, key := range sortedKeys(args) {
		v := args[key]
		kp := from.Key(key)
		switch {
		case key == rsfWeightKey:
			a.Weight = t.int32Arg(v, kp, to.Child("weight"))
		case key == rsfResourcesKey:
			a.Resources = t.resourceStrategies(v, kp, to.Child("resources"))
		case key == sraPolicyKey:
			s, err := toString(v, kp)
			t.add(err)
			sraPolicy = &s
		case key == sraResourcesKey:
			names, err := toNames(v, kp)
			t.add(err)
			sraNames = names
		case key == sraRetentionWeightKey:
			if a.SRA == nil {
				a.SRA = &v1alpha1.ScarceResourceAvoidance{}
			}
			a.SRA.RetentionWeight = t.int32Arg(v, kp, to.Child("sra", "retentionWeight"))
		case strings.HasPrefix(key, sraRetentionPrefix+"."):
			w, err := toInt32(v, kp)
			if err != nil {
				t.add(err)
				continue
			}
			name := strings.TrimPrefix(key, sraRetentionPrefix+".")
			retention[name], retentionKeys[name] = w, key
		case proportional.take(t, key, v, from):
		default:
			t.unknownArg(v1alpha1.ResourceStrategyFitPlugin, key, from, []string{rsfResourcesKey, rsfWeightKey,
				sraPolicyKey, sraProportionalPrefix + ".<name>.cpu", sraProportionalPrefix + ".<name>.memory",
				sraResourcesKey, sraRetentionPrefix + ".<name>", sraRetentionWeightKey})
		}
	}
	res := proportional.result(t, sraNames, sraResourcesKey, args, from)
	if sraPolicy == nil && len(sraNames) == 0 && a.SRA == nil && len(retention) == 0 {
		return a
	}
	if a.SRA == nil {
		a.SRA = &v1alpha1.ScarceResourceAvoidance{}
	}
	sp := to.Child("sra")
	if sraPolicy != nil {
		a.SRA.Policy = v1alpha1.SRAPolicy(*sraPolicy)
		t.origins.record(sp.Child("policy"), from.Key(sraPolicyKey))
	}
	a.SRA.Resources = map[corev1.ResourceName]int32{}
	for _, name := range sraNames {
		w, ok := retention[name]
		if !ok {
			w = 1
		}
		a.SRA.Resources[corev1.ResourceName(name)] = w
		origin := from.Key(sraResourcesKey)
		if key, ok := retentionKeys[name]; ok {
			origin = from.Key(key)
		}
		t.origins.record(sp.Child("resources").Key(name), origin)
	}
	t.origins.record(sp.Child("resources"), from.Key(sraResourcesKey))
	for _, name := range sortedKeys(retention) {
		if _, ok := a.SRA.Resources[corev1.ResourceName(name)]; !ok {
			key := retentionKeys[name]
			t.add(field.Invalid(from.Key(key), display(args[key]),
				fmt.Sprintf("%s is not listed in %s, so this weight has no effect (Volcano ignores it); add it to %s", name, sraResourcesKey, sraResourcesKey)))
		}
	}
	if a.SRA.Policy == v1alpha1.SRAProportional {
		a.SRA.Proportional = map[corev1.ResourceName]v1alpha1.ResourceReservation{}
		for _, name := range sraNames {
			a.SRA.Proportional[corev1.ResourceName(name)] = res[name].out
			res[name].record(t, sp.Child("proportional").Key(name), from)
		}
	}
	return a
}

// resourceStrategies reads resource-strategy-fit's resources: a map of
// resource name (or prefix ending in "*") to {type, weight}.
func (t *translator) resourceStrategies(v any, from, to *field.Path) map[string]v1alpha1.ResourceStrategy {
	m, err := toMap(v, from)
	if err != nil {
		t.add(err)
		return nil
	}
	out := map[string]v1alpha1.ResourceStrategy{}
	for _, name := range sortedKeys(m) {
		np, tp := from.Key(name), to.Key(name)
		entry, err := toMap(m[name], np)
		if err != nil {
			t.add(err)
			continue
		}
		var rs v1alpha1.ResourceStrategy
		for _, key := range sortedKeys(entry) {
			switch key {
			case "type":
				s, err := toString(entry[key], np.Child(key))
				t.add(err)
				rs.Type = v1alpha1.ScoringStrategy(s)
				t.origins.record(tp.Child("type"), np.Child(key))
			case "weight":
				rs.Weight = t.int32Arg(entry[key], np.Child(key), tp.Child("weight"))
			default:
				t.unknownKey(np.Child(key), key, []string{"type", "weight"}, "field")
			}
		}
		out[name] = rs
		t.origins.record(tp, np)
	}
	return out
}

// Volcano argument keys of the deviceshare plugin.
const (
	deviceShareSharingKey       = "deviceshare.GPUSharingEnable"
	deviceShareNumberKey        = "deviceshare.GPUNumberEnable"
	deviceSharePolicyKey        = "deviceshare.SchedulePolicy"
	deviceShareWeightKey        = "deviceshare.ScheduleWeight"
	deviceShareNodeLockKey      = "deviceshare.NodeLockEnable"
	deviceShareVGPUKey          = "deviceshare.VGPUEnable"
	deviceShareVGPUSpreadKey    = "deviceshare.VGPUPodGroupDeviceSpread"
	deviceShareAscendMindKey    = "deviceshare.AscendMindClusterVNPUEnable"
	deviceShareAscendHAMiKey    = "deviceshare.AscendHAMiVNPUEnable"
	deviceShareGeometriesCMKey  = "deviceshare.KnownGeometriesCMName"
	deviceShareGeometriesNSKey  = "deviceshare.KnownGeometriesCMNamespace"
	deviceShareNotAvailableText = "is not available in this version of Caldera, which shares NVIDIA GPUs by memory (deviceshare.GPUSharingEnable) and by whole cards (deviceshare.GPUNumberEnable)"
)

func translateDeviceShare(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.DeviceShareArgs{}
	for _, key := range sortedKeys(args) {
		v := args[key]
		kp := from.Key(key)
		switch key {
		case deviceShareSharingKey:
			a.GPUSharing = t.boolArg(v, kp, to.Child("gpuSharing"))
		case deviceShareNumberKey:
			a.GPUNumber = t.boolArg(v, kp, to.Child("gpuNumber"))
		case deviceSharePolicyKey:
			s, err := toString(v, kp)
			if err != nil {
				t.add(err)
				continue
			}
			a.SchedulePolicy = &s
			t.origins.record(to.Child("schedulePolicy"), kp)
		case deviceShareWeightKey:
			a.Weight = t.int32Arg(v, kp, to.Child("weight"))
		case deviceShareNodeLockKey:
			// Volcano locks a node while it writes a pod's cards before the
			// bind; here the cards travel with the bind itself, so there is
			// nothing to lock. Either value is accepted.
			_, err := toBool(v, kp)
			t.add(err)
		case deviceShareGeometriesCMKey, deviceShareGeometriesNSKey:
			// Read only by the device kinds below.
			_, err := toString(v, kp)
			t.add(err)
		case deviceShareVGPUKey, deviceShareVGPUSpreadKey, deviceShareAscendMindKey, deviceShareAscendHAMiKey:
			b, err := toBool(v, kp)
			t.add(err)
			if b {
				t.add(field.Invalid(kp, display(v), strings.TrimPrefix(key, "deviceshare.")+" "+deviceShareNotAvailableText))
			}
		default:
			t.unknownArg(v1alpha1.DeviceSharePlugin, key, from, []string{
				deviceShareAscendHAMiKey, deviceShareAscendMindKey, deviceShareNumberKey, deviceShareSharingKey,
				deviceShareGeometriesCMKey, deviceShareGeometriesNSKey, deviceShareNodeLockKey,
				deviceSharePolicyKey, deviceShareWeightKey, deviceShareVGPUKey, deviceShareVGPUSpreadKey})
		}
	}
	// Volcano turns each kind on only when asked: once either is named,
	// the other is off unless named too.
	off := false
	switch {
	case a.GPUSharing != nil && a.GPUNumber == nil:
		a.GPUNumber = &off
	case a.GPUNumber != nil && a.GPUSharing == nil:
		a.GPUSharing = &off
	}
	return a
}
