package volcano

import (
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
)

// parsed parses v with parse, records that the typed field at to came
// from the argument at from, and returns the value; nil, with the error
// collected, when v does not parse.
func parsed[T any](t *translator, v any, from, to *field.Path, parse func(any, *field.Path) (T, *field.Error)) *T {
	x, err := parse(v, from)
	if err != nil {
		t.add(err)
		return nil
	}
	t.origins.record(to, from)
	return &x
}

// An argKey is one Volcano argument key of a plugin and what reading its
// value does.
type argKey struct {
	key  string
	read func(t *translator, v any, from *field.Path)
}

// setArg is the key whose value, parsed with parse, sets *dst, the typed
// field at to.
func setArg[T any](key string, parse func(any, *field.Path) (T, *field.Error), dst **T, to *field.Path) argKey {
	return argKey{key: key, read: func(t *translator, v any, from *field.Path) {
		*dst = parsed(t, v, from, to, parse)
	}}
}

// readArg is the key whose value, parsed with parse, is handed to use
// (nothing is called when it does not parse).
func readArg[T any](key string, parse func(any, *field.Path) (T, *field.Error), use func(t *translator, x T, from *field.Path)) argKey {
	return argKey{key: key, read: func(t *translator, v any, from *field.Path) {
		x, err := parse(v, from)
		if err != nil {
			t.add(err)
			return
		}
		if use != nil {
			use(t, x, from)
		}
	}}
}

// An argPattern takes the keys of a family ("binpack.resources.<name>"):
// take reports whether it consumed key; known names the family in errors.
type argPattern interface {
	take(t *translator, key string, v any, from *field.Path) bool
	known() []string
}

// prefixArg is a family of keys "<prefix>.<name>" whose values parse with
// parse and are handed to use with the name.
type prefixArg[T any] struct {
	prefix, placeholder string
	parse               func(any, *field.Path) (T, *field.Error)
	use                 func(t *translator, name string, x T, key string, from *field.Path)
}

func (p prefixArg[T]) take(t *translator, key string, v any, from *field.Path) bool {
	name, ok := strings.CutPrefix(key, p.prefix+".")
	if !ok {
		return false
	}
	kp := from.Key(key)
	x, err := p.parse(v, kp)
	if err != nil {
		t.add(err)
		return true
	}
	p.use(t, name, x, key, kp)
	return true
}

func (p prefixArg[T]) known() []string { return []string{p.prefix + "." + p.placeholder} }

// readArgs reads a plugin's Volcano arguments in key order: a key of keys
// is read as it says, any other is offered to the patterns in turn, and a
// key none takes is reported with the plugin's known keys.
func (t *translator) readArgs(plugin string, args map[string]any, from *field.Path, keys []argKey, patterns ...argPattern) {
	byKey := make(map[string]argKey, len(keys))
	known := make([]string, 0, len(keys))
	for _, k := range keys {
		byKey[k.key] = k
		known = append(known, k.key)
	}
	for _, p := range patterns {
		known = append(known, p.known()...)
	}
	slices.Sort(known)
	for _, key := range sortedKeys(args) {
		if k, ok := byKey[key]; ok {
			k.read(t, args[key], from.Key(key))
			continue
		}
		taken := false
		for _, p := range patterns {
			if taken = p.take(t, key, args[key], from); taken {
				break
			}
		}
		if !taken {
			t.unknownArg(plugin, key, from, known)
		}
	}
}

// toMetaSeconds reads a whole number of seconds as a metav1.Duration.
func toMetaSeconds(v any, path *field.Path) (metav1.Duration, *field.Error) {
	d, err := toSeconds(v, path)
	return metav1.Duration{Duration: d}, err
}

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

func (r *resourceWeights) known() []string { return []string{r.listKey, r.listKey + ".<name>"} }

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
	t.readArgs(v1alpha1.BinpackPlugin, args, from, []argKey{
		setArg(binpackWeightKey, toInt32, &a.Weight, to.Child("weight")),
		setArg(binpackCPUKey, toInt32, &a.CPU, to.Child("cpu")),
		setArg(binpackMemoryKey, toInt32, &a.Memory, to.Child("memory")),
	}, res)
	a.Resources = res.result(t, from, to.Child("resources"))
	return a
}

func translateNodeOrder(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.NodeOrderArgs{}
	weight := func(key, name string, dst **int32) argKey { return setArg(key, toInt32, dst, to.Child(name)) }
	t.readArgs(v1alpha1.NodeOrderPlugin, args, from, []argKey{
		weight("leastrequested.weight", "leastRequestedWeight", &a.LeastRequestedWeight),
		weight("mostrequested.weight", "mostRequestedWeight", &a.MostRequestedWeight),
		weight("nodeaffinity.weight", "nodeAffinityWeight", &a.NodeAffinityWeight),
		weight("podaffinity.weight", "podAffinityWeight", &a.PodAffinityWeight),
		weight("balancedresource.weight", "balancedResourceWeight", &a.BalancedResourceWeight),
		weight("tainttoleration.weight", "taintTolerationWeight", &a.TaintTolerationWeight),
		weight("imagelocality.weight", "imageLocalityWeight", &a.ImageLocalityWeight),
		weight("podtopologyspread.weight", "podTopologySpreadWeight", &a.PodTopologySpreadWeight),
	})
	return a
}

// Volcano argument keys of the overcommit plugin.
const overcommitFactorKey = "overcommit-factor"

func translateOvercommit(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.OvercommitArgs{}
	t.readArgs(v1alpha1.OvercommitPlugin, args, from, []argKey{
		setArg(overcommitFactorKey, toFloat, &a.Factor, to.Child("factor")),
	}, prefixArg[float64]{prefix: overcommitFactorKey, placeholder: "<resource>", parse: toFloat,
		use: func(t *translator, name string, f float64, _ string, kp *field.Path) {
			if a.ResourceFactors == nil {
				a.ResourceFactors = map[corev1.ResourceName]float64{}
			}
			a.ResourceFactors[corev1.ResourceName(name)] = f
			t.origins.record(to.Child("resourceFactors").Key(name), kp)
		}})
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

func translatePredicates(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.PredicatesArgs{}
	on := func(key, name string, dst **bool) argKey { return setArg(key, toBool, dst, to.Child(name)) }
	proportional := false
	var proportionalNames []string
	reservations := newReservationKeys(proportionalResourcesKey)
	// Old Volcano releases shared GPUs in the predicates plugin; current
	// ones do it in deviceshare. Off, the key is harmless.
	oldGPUSharing := func(t *translator, v any, kp *field.Path) {
		b, err := toBool(v, kp)
		t.add(err)
		if b {
			t.add(field.Invalid(kp, display(v), "GPU sharing is the deviceshare plugin's job in current Volcano releases: list deviceshare with deviceshare.GPUSharingEnable or deviceshare.GPUNumberEnable instead"))
		}
	}
	t.readArgs(v1alpha1.PredicatesPlugin, args, from, []argKey{
		on("predicate.NodeAffinityEnable", "nodeAffinity", &a.NodeAffinity),
		on("predicate.NodePortsEnable", "nodePorts", &a.NodePorts),
		on("predicate.TaintTolerationEnable", "taintToleration", &a.TaintToleration),
		on("predicate.PodAffinityEnable", "podAffinity", &a.PodAffinity),
		on("predicate.NodeVolumeLimitsEnable", "nodeVolumeLimits", &a.NodeVolumeLimits),
		on("predicate.VolumeZoneEnable", "volumeZone", &a.VolumeZone),
		on("predicate.PodTopologySpreadEnable", "podTopologySpread", &a.PodTopologySpread),
		on("predicate.VolumeBindingEnable", "volumeBinding", &a.VolumeBinding),
		on("predicate.DynamicResourceAllocationEnable", "dynamicResourceAllocation", &a.DynamicResourceAllocation),
		on("predicate.CacheEnable", "cache", &a.Cache),
		readArg(proportionalEnableKey, toBool, func(_ *translator, b bool, _ *field.Path) { proportional = b }),
		readArg(proportionalResourcesKey, toNames, func(_ *translator, names []string, _ *field.Path) { proportionalNames = names }),
		{key: gpuSharingEnableKey, read: oldGPUSharing},
		{key: gpuNumberEnableKey, read: oldGPUSharing},
		setArg(volumeBindingTimeoutKey, toMetaSeconds, &a.VolumeBindingTimeout, to.Child("volumeBindingTimeout")),
		setArg(volumeBindingWeightKey, toInt32, &a.VolumeBindingWeight, to.Child("volumeBindingWeight")),
		{key: volumeBindingShapeKey, read: func(t *translator, v any, kp *field.Path) {
			a.VolumeBindingShape = t.shape(v, kp, to.Child("volumeBindingShape"))
		}},
		setArg(draFilterTimeoutKey, toMetaSeconds, &a.DRAFilterTimeout, to.Child("draFilterTimeout")),
	}, reservations)

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

func (r *reservationKeys) known() []string {
	return []string{r.prefix + ".<name>.cpu", r.prefix + ".<name>.memory"}
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
				if n := parsed(t, m[key], pp.Child(key), to.Index(i).Child(key), toInt32); n != nil {
					pt.Utilization = *n
				}
			case "score":
				if n := parsed(t, m[key], pp.Child(key), to.Index(i).Child(key), toInt32); n != nil {
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
	t.readArgs(v1alpha1.NetworkTopologyAwarePlugin, args, from, []argKey{
		setArg(ntaWeightKey, toInt32, &a.Weight, to.Child("weight")),
		setArg(ntaBinpackCPUKey, toInt32, &a.BinpackCPU, to.Child("binpackCPU")),
		setArg(ntaBinpackMemoryKey, toInt32, &a.BinpackMemory, to.Child("binpackMemory")),
		setArg(ntaNormalPodEnableKey, toBool, &a.NormalPodBinpack, to.Child("normalPodBinpack")),
		setArg(ntaNormalPodFadingKey, toFloat, &a.NormalPodFading, to.Child("normalPodFading")),
	}, res)
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
	t.readArgs(v1alpha1.NodeGroupPlugin, args, from, []argKey{
		setArg(ngStrictKey, toBool, &a.Strict, to.Child("strict")),
		setArg(ngPreferredOrderKey, toBool, &a.EnablePreferredOrder, to.Child("enablePreferredOrder")),
	})
	return a
}

// Volcano argument key of the task-topology plugin.
const ttWeightKey = "task-topology.weight"

func translateTaskTopology(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.TaskTopologyArgs{}
	t.readArgs(v1alpha1.TaskTopologyPlugin, args, from, []argKey{setArg(ttWeightKey, toInt32, &a.Weight, to.Child("weight"))})
	return a
}

// Volcano argument key of the numa-aware plugin.
const numaWeightKey = "weight"

func translateNUMAAware(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.NUMAAwareArgs{}
	t.readArgs(v1alpha1.NUMAAwarePlugin, args, from, []argKey{setArg(numaWeightKey, toInt32, &a.Weight, to.Child("weight"))})
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
	t.readArgs(v1alpha1.ResourceStrategyFitPlugin, args, from, []argKey{
		setArg(rsfWeightKey, toInt32, &a.Weight, to.Child("weight")),
		{key: rsfResourcesKey, read: func(t *translator, v any, kp *field.Path) {
			a.Resources = t.resourceStrategies(v, kp, to.Child("resources"))
		}},
		{key: sraPolicyKey, read: func(t *translator, v any, kp *field.Path) {
			s, err := toString(v, kp)
			t.add(err)
			sraPolicy = &s
		}},
		{key: sraResourcesKey, read: func(t *translator, v any, kp *field.Path) {
			names, err := toNames(v, kp)
			t.add(err)
			sraNames = names
		}},
		{key: sraRetentionWeightKey, read: func(t *translator, v any, kp *field.Path) {
			if a.SRA == nil {
				a.SRA = &v1alpha1.ScarceResourceAvoidance{}
			}
			a.SRA.RetentionWeight = parsed(t, v, kp, to.Child("sra", "retentionWeight"), toInt32)
		}},
	}, prefixArg[int32]{prefix: sraRetentionPrefix, placeholder: "<name>", parse: toInt32,
		use: func(_ *translator, name string, w int32, key string, _ *field.Path) {
			retention[name], retentionKeys[name] = w, key
		}}, proportional)
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
				rs.Weight = parsed(t, entry[key], np.Child(key), tp.Child("weight"), toInt32)
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
	deviceShareNotAvailableText = "is not available in this version of Caldera, which shares NVIDIA GPUs by memory (deviceshare.GPUSharingEnable), by whole cards (deviceshare.GPUNumberEnable) and as virtual GPUs (deviceshare.VGPUEnable)"
)

// deviceConfigOf is the arguments' device ConfigMap, made when missing.
func deviceConfigOf(a *v1alpha1.DeviceShareArgs) *v1alpha1.ConfigMapReference {
	if a.DeviceConfig == nil {
		a.DeviceConfig = &v1alpha1.ConfigMapReference{}
	}
	return a.DeviceConfig
}

func translateDeviceShare(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.DeviceShareArgs{}
	notAvailable := func(key string) argKey {
		return argKey{key: key, read: func(t *translator, v any, kp *field.Path) {
			b, err := toBool(v, kp)
			t.add(err)
			if b {
				t.add(field.Invalid(kp, display(v), strings.TrimPrefix(key, "deviceshare.")+" "+deviceShareNotAvailableText))
			}
		}}
	}
	t.readArgs(v1alpha1.DeviceSharePlugin, args, from, []argKey{
		setArg(deviceShareSharingKey, toBool, &a.GPUSharing, to.Child("gpuSharing")),
		setArg(deviceShareNumberKey, toBool, &a.GPUNumber, to.Child("gpuNumber")),
		setArg(deviceSharePolicyKey, toString, &a.SchedulePolicy, to.Child("schedulePolicy")),
		setArg(deviceShareWeightKey, toInt32, &a.Weight, to.Child("weight")),
		// Volcano locks a node while it writes a pod's cards before the
		// bind; here the cards travel with the bind itself, so there is
		// nothing to lock. Either value is accepted.
		readArg[bool](deviceShareNodeLockKey, toBool, nil),
		readArg(deviceShareGeometriesCMKey, toString, func(_ *translator, name string, _ *field.Path) {
			deviceConfigOf(a).Name = name
		}),
		readArg(deviceShareGeometriesNSKey, toString, func(_ *translator, ns string, _ *field.Path) {
			deviceConfigOf(a).Namespace = ns
		}),
		setArg(deviceShareVGPUKey, toBool, &a.VGPU, to.Child("vgpu")),
		notAvailable(deviceShareVGPUSpreadKey),
		notAvailable(deviceShareAscendMindKey),
		notAvailable(deviceShareAscendHAMiKey),
	})
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

// Volcano argument keys of the usage plugin.
const (
	usageWeightKey       = "usage.weight"
	usageCPUWeightKey    = "cpu.weight"
	usageMemoryWeightKey = "memory.weight"
	usageThresholdsKey   = "thresholds"
)

func translateUsage(t *translator, args map[string]any, from, to *field.Path) v1alpha1.PluginArgs {
	a := &v1alpha1.UsageArgs{}
	t.readArgs(v1alpha1.UsagePlugin, args, from, []argKey{
		setArg(usageWeightKey, toInt32, &a.Weight, to.Child("weight")),
		setArg(usageCPUWeightKey, toInt32, &a.CPUWeight, to.Child("cpuWeight")),
		setArg(usageMemoryWeightKey, toInt32, &a.MemoryWeight, to.Child("memoryWeight")),
		readArg(usageThresholdsKey, toMap, func(t *translator, m map[string]any, kp *field.Path) {
			tp := to.Child("thresholds")
			for _, key := range sortedKeys(m) {
				switch key {
				case "cpu":
					a.Thresholds.CPU = parsed(t, m[key], kp.Key(key), tp.Child("cpu"), toFloat)
				case "mem":
					a.Thresholds.Memory = parsed(t, m[key], kp.Key(key), tp.Child("memory"), toFloat)
				default:
					t.unknownKey(kp.Key(key), key, []string{"cpu", "mem"}, "threshold")
				}
			}
		}),
	})
	return a
}
