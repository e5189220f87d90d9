package volcano

import (
	"fmt"
	"math"
	"slices"
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
	type reservation struct {
		cpu, memory       *float64
		cpuKey, memoryKey string
	}
	reservations := map[string]*reservation{}
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
		case strings.HasPrefix(key, proportionalResourcesKey+".") && (strings.HasSuffix(key, ".cpu") || strings.HasSuffix(key, ".memory")):
			rest := strings.TrimPrefix(key, proportionalResourcesKey+".")
			name, kind := rest[:strings.LastIndexByte(rest, '.')], rest[strings.LastIndexByte(rest, '.')+1:]
			f, err := toFloat(v, kp)
			if err != nil {
				t.add(err)
				continue
			}
			r := reservations[name]
			if r == nil {
				r = &reservation{}
				reservations[name] = r
			}
			if kind == "cpu" {
				r.cpu, r.cpuKey = &f, key
			} else {
				r.memory, r.memoryKey = &f, key
			}
		case key == gpuSharingEnableKey || key == gpuNumberEnableKey:
			// Old Volcano releases shared GPUs in the predicates plugin;
			// current ones do it in deviceshare. Off, the key is harmless.
			b, err := toBool(v, kp)
			t.add(err)
			if b {
				t.add(field.Invalid(kp, display(v), "GPU sharing is the deviceshare plugin's job in current Volcano releases, and deviceshare is not available in this version of Caldera"))
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
	if proportional {
		a.Proportional = &v1alpha1.ProportionalPredicate{Resources: map[corev1.ResourceName]v1alpha1.ResourceReservation{}}
		rp := to.Child("proportional", "resources")
		for _, name := range proportionalNames {
			var out v1alpha1.ResourceReservation
			t.origins.record(rp.Key(name), from.Key(proportionalResourcesKey))
			if r := reservations[name]; r != nil {
				if r.cpu != nil {
					// Volcano reads cores per unit.
					out.CPU = resource.NewMilliQuantity(int64(math.Round(*r.cpu*1000)), resource.DecimalSI)
					t.origins.record(rp.Key(name).Child("cpu"), from.Key(r.cpuKey))
				}
				if r.memory != nil {
					// Volcano reads gigabytes (10^9 bytes) per unit.
					out.Memory = resource.NewQuantity(int64(math.Round(*r.memory*1e9)), resource.DecimalSI)
					t.origins.record(rp.Key(name).Child("memory"), from.Key(r.memoryKey))
				}
			}
			a.Proportional.Resources[corev1.ResourceName(name)] = out
		}
		t.origins.record(rp, from.Key(proportionalResourcesKey))
	}
	for _, name := range sortedKeys(reservations) {
		if !slices.Contains(proportionalNames, name) {
			r := reservations[name]
			key := r.cpuKey
			if key == "" {
				key = r.memoryKey
			}
			t.add(field.Invalid(from.Key(key), display(args[key]),
				fmt.Sprintf("%s is not listed in %s, so this value has no effect (Volcano ignores it); add it to %s", name, proportionalResourcesKey, proportionalResourcesKey)))
		}
	}
	return a
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
