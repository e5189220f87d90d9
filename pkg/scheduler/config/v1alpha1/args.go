package v1alpha1

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PluginArgs is the typed form of one plugin's arguments.
//
// +kubebuilder:object:generate=false
type PluginArgs interface {
	// Default fills in unset fields.
	Default()
	// Validate checks defaulted arguments; path locates them in the
	// configuration.
	Validate(path *field.Path) field.ErrorList
}

var (
	_ PluginArgs = &BinpackArgs{}
	_ PluginArgs = &NodeOrderArgs{}
	_ PluginArgs = &OvercommitArgs{}
	_ PluginArgs = &PredicatesArgs{}
	_ PluginArgs = &NetworkTopologyAwareArgs{}
	_ PluginArgs = &NodeGroupArgs{}
	_ PluginArgs = &ResourceStrategyFitArgs{}
	_ PluginArgs = &TaskTopologyArgs{}
	_ PluginArgs = &NUMAAwareArgs{}
	_ PluginArgs = &DeviceShareArgs{}
	_ PluginArgs = &UsageArgs{}
)

// NewPluginArgs returns empty typed arguments for the plugin, or nil when
// this package has no argument type for it.
func NewPluginArgs(plugin string) PluginArgs {
	switch plugin {
	case BinpackPlugin:
		return &BinpackArgs{}
	case NodeOrderPlugin:
		return &NodeOrderArgs{}
	case OvercommitPlugin:
		return &OvercommitArgs{}
	case PredicatesPlugin:
		return &PredicatesArgs{}
	case NetworkTopologyAwarePlugin:
		return &NetworkTopologyAwareArgs{}
	case NodeGroupPlugin:
		return &NodeGroupArgs{}
	case ResourceStrategyFitPlugin:
		return &ResourceStrategyFitArgs{}
	case TaskTopologyPlugin:
		return &TaskTopologyArgs{}
	case NUMAAwarePlugin:
		return &NUMAAwareArgs{}
	case DeviceSharePlugin:
		return &DeviceShareArgs{}
	case UsagePlugin:
		return &UsageArgs{}
	}
	return nil
}

// TakesNoArgs reports whether the plugin has no arguments at all, so that
// any given are an error.
func TakesNoArgs(plugin string) bool {
	switch plugin {
	case GangPlugin, PriorityPlugin, DRFPlugin, ProportionPlugin, CapacityPlugin, ConformancePlugin:
		return true
	}
	return false
}

// emptyArgs reports whether raw holds no arguments: nothing, null or {}.
func emptyArgs(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null")) || bytes.Equal(raw, []byte("{}"))
}

// DecodePluginArgs decodes the plugin's arguments strictly into their typed
// form and defaults them. It returns nil arguments for plugins that have no
// argument type. It does not validate; plugin factories call Validate.
func DecodePluginArgs(p *PluginConfig, path *field.Path) (PluginArgs, field.ErrorList) {
	args := NewPluginArgs(p.Name)
	if args == nil {
		return nil, nil
	}
	if !emptyArgs(p.Args.Raw) {
		if errs := decodeStrict(p.Args.Raw, args, path); len(errs) > 0 {
			return nil, errs
		}
	}
	args.Default()
	return args, nil
}

func setInt32(p **int32, v int32) {
	if *p == nil {
		*p = &v
	}
}

func setBool(p **bool, v bool) {
	if *p == nil {
		*p = &v
	}
}

func setFloat(p **float64, v float64) {
	if *p == nil {
		*p = &v
	}
}

func setDuration(p **metav1.Duration, v metav1.Duration) {
	if *p == nil {
		*p = &v
	}
}

func validateWeight(w *int32, path *field.Path) field.ErrorList {
	if w != nil && *w < 0 {
		return field.ErrorList{field.Invalid(path, *w, "must be greater than or equal to 0")}
	}
	return nil
}

// validateExtendedResources checks the names of a resource-to-weight map:
// each must be a resource name, and not cpu or memory when those have
// fields of their own.
func validateResourceNames[V any](m map[corev1.ResourceName]V, path *field.Path, ownFields bool) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(m)) {
		p := path.Key(string(name))
		if ownFields && (name == corev1.ResourceCPU || name == corev1.ResourceMemory) {
			errs = append(errs, field.Invalid(p, name, "cpu and memory have fields of their own"))
			continue
		}
		for _, msg := range validation.IsQualifiedName(string(name)) {
			errs = append(errs, field.Invalid(p, name, msg))
		}
	}
	return errs
}

// Default implements PluginArgs.
func (a *BinpackArgs) Default() {
	setInt32(&a.Weight, 1)
	setInt32(&a.CPU, 1)
	setInt32(&a.Memory, 1)
}

// Validate implements PluginArgs.
func (a *BinpackArgs) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateWeight(a.Weight, path.Child("weight"))...)
	errs = append(errs, validateWeight(a.CPU, path.Child("cpu"))...)
	errs = append(errs, validateWeight(a.Memory, path.Child("memory"))...)
	errs = append(errs, validateResourceNames(a.Resources, path.Child("resources"), true)...)
	for _, name := range slices.Sorted(maps.Keys(a.Resources)) {
		w := a.Resources[name]
		errs = append(errs, validateWeight(&w, path.Child("resources").Key(string(name)))...)
	}
	return errs
}

// Default implements PluginArgs.
func (a *DeviceShareArgs) Default() {
	setBool(&a.VGPU, false)
	setBool(&a.GPUSharing, !*a.VGPU)
	setBool(&a.GPUNumber, !*a.VGPU)
	if a.SchedulePolicy == nil {
		p := DeviceSharePolicyBinpack
		a.SchedulePolicy = &p
	}
	setInt32(&a.Weight, 1)
	if *a.VGPU {
		if a.DeviceConfig == nil {
			a.DeviceConfig = &ConfigMapReference{}
		}
		if a.DeviceConfig.Namespace == "" {
			a.DeviceConfig.Namespace = DefaultDeviceConfigNamespace
		}
		if a.DeviceConfig.Name == "" {
			a.DeviceConfig.Name = DefaultDeviceConfigName
		}
	}
}

// Validate implements PluginArgs.
func (a *DeviceShareArgs) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	policies := []string{DeviceSharePolicyBinpack, DeviceSharePolicySpread, DeviceSharePolicyFGD}
	if a.SchedulePolicy != nil && !slices.Contains(policies, *a.SchedulePolicy) {
		errs = append(errs, field.NotSupported(path.Child("schedulePolicy"), *a.SchedulePolicy, policies))
	}
	errs = append(errs, validateWeight(a.Weight, path.Child("weight"))...)
	if a.VGPU != nil && *a.VGPU {
		for _, k := range []struct {
			on   *bool
			name string
		}{{a.GPUSharing, "gpuSharing"}, {a.GPUNumber, "gpuNumber"}} {
			if k.on != nil && *k.on {
				errs = append(errs, field.Invalid(path.Child(k.name), true, "may not be on with vgpu: a node runs either the vGPU device plugin or the GPU-sharing one"))
			}
		}
		if a.SchedulePolicy != nil && *a.SchedulePolicy == DeviceSharePolicyFGD {
			errs = append(errs, field.Invalid(path.Child("schedulePolicy"), DeviceSharePolicyFGD, "vGPUs are placed by binpack or spread"))
		}
	}
	if r := a.DeviceConfig; r != nil {
		p := path.Child("deviceConfig")
		if r.Namespace != "" {
			for _, msg := range validation.IsDNS1123Label(r.Namespace) {
				errs = append(errs, field.Invalid(p.Child("namespace"), r.Namespace, msg))
			}
		}
		if r.Name != "" {
			for _, msg := range validation.IsDNS1123Subdomain(r.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), r.Name, msg))
			}
		}
	}
	return errs
}

// Default implements PluginArgs. The defaults are Volcano's.
func (a *NodeOrderArgs) Default() {
	setInt32(&a.LeastRequestedWeight, 1)
	setInt32(&a.MostRequestedWeight, 0)
	setInt32(&a.NodeAffinityWeight, 2)
	setInt32(&a.PodAffinityWeight, 2)
	setInt32(&a.BalancedResourceWeight, 1)
	setInt32(&a.TaintTolerationWeight, 3)
	setInt32(&a.ImageLocalityWeight, 1)
	setInt32(&a.PodTopologySpreadWeight, 2)
}

// Validate implements PluginArgs.
func (a *NodeOrderArgs) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, w := range []struct {
		name   string
		weight *int32
	}{
		{"leastRequestedWeight", a.LeastRequestedWeight},
		{"mostRequestedWeight", a.MostRequestedWeight},
		{"nodeAffinityWeight", a.NodeAffinityWeight},
		{"podAffinityWeight", a.PodAffinityWeight},
		{"balancedResourceWeight", a.BalancedResourceWeight},
		{"taintTolerationWeight", a.TaintTolerationWeight},
		{"imageLocalityWeight", a.ImageLocalityWeight},
		{"podTopologySpreadWeight", a.PodTopologySpreadWeight},
	} {
		errs = append(errs, validateWeight(w.weight, path.Child(w.name))...)
	}
	return errs
}

// DefaultOvercommitFactor is Volcano's default overcommit-factor.
const DefaultOvercommitFactor = 1.2

// Default implements PluginArgs.
func (a *OvercommitArgs) Default() {
	setFloat(&a.Factor, DefaultOvercommitFactor)
}

// Validate implements PluginArgs.
func (a *OvercommitArgs) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if a.Factor != nil && !(*a.Factor >= 1) {
		errs = append(errs, field.Invalid(path.Child("factor"), *a.Factor, "must be at least 1"))
	}
	errs = append(errs, validateResourceNames(a.ResourceFactors, path.Child("resourceFactors"), false)...)
	for _, name := range slices.Sorted(maps.Keys(a.ResourceFactors)) {
		if f := a.ResourceFactors[name]; !(f >= 1) {
			errs = append(errs, field.Invalid(path.Child("resourceFactors").Key(string(name)), f, "must be at least 1"))
		}
	}
	return errs
}

// Default implements PluginArgs. The defaults are Volcano's.
func (a *PredicatesArgs) Default() {
	for _, on := range []**bool{
		&a.NodeAffinity, &a.NodePorts, &a.TaintToleration, &a.PodAffinity,
		&a.NodeVolumeLimits, &a.VolumeZone, &a.PodTopologySpread, &a.VolumeBinding,
	} {
		setBool(on, true)
	}
	setBool(&a.DynamicResourceAllocation, false)
	setBool(&a.Cache, false)
	setDuration(&a.VolumeBindingTimeout, metav1.Duration{Duration: 30e9})
	setInt32(&a.VolumeBindingWeight, 1)
	setDuration(&a.DRAFilterTimeout, metav1.Duration{Duration: 10e9})
	if a.Proportional != nil {
		defaultReservations(a.Proportional.Resources)
	}
}

// defaultReservations keeps 1 CPU and 1G of memory per unit where a
// reservation does not say.
func defaultReservations(m map[corev1.ResourceName]ResourceReservation) {
	for name, r := range m {
		if r.CPU == nil {
			r.CPU = new(resource.MustParse("1"))
		}
		if r.Memory == nil {
			r.Memory = new(resource.MustParse("1G"))
		}
		m[name] = r
	}
}

// validateReservations checks a scarce-resource-to-reservation map.
func validateReservations(m map[corev1.ResourceName]ResourceReservation, p *field.Path) field.ErrorList {
	errs := validateResourceNames(m, p, true)
	for _, name := range slices.Sorted(maps.Keys(m)) {
		r := m[name]
		if r.CPU != nil && r.CPU.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Key(string(name)).Child("cpu"), r.CPU.String(), "must not be negative"))
		}
		if r.Memory != nil && r.Memory.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Key(string(name)).Child("memory"), r.Memory.String(), "must not be negative"))
		}
	}
	return errs
}

// maxShapeScore is the highest score of a utilization shape point, as in
// kube-scheduler.
const maxShapeScore = 10

// Validate implements PluginArgs.
func (a *PredicatesArgs) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if a.VolumeBindingTimeout != nil && a.VolumeBindingTimeout.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("volumeBindingTimeout"), a.VolumeBindingTimeout.Duration.String(), "must be positive"))
	}
	errs = append(errs, validateWeight(a.VolumeBindingWeight, path.Child("volumeBindingWeight"))...)
	for i, pt := range a.VolumeBindingShape {
		p := path.Child("volumeBindingShape").Index(i)
		if pt.Utilization < 0 || pt.Utilization > 100 {
			errs = append(errs, field.Invalid(p.Child("utilization"), pt.Utilization, "must be between 0 and 100"))
		} else if i > 0 && pt.Utilization <= a.VolumeBindingShape[i-1].Utilization {
			errs = append(errs, field.Invalid(p.Child("utilization"), pt.Utilization, "must be greater than the previous point's"))
		}
		if pt.Score < 0 || pt.Score > maxShapeScore {
			errs = append(errs, field.Invalid(p.Child("score"), pt.Score, fmt.Sprintf("must be between 0 and %d", maxShapeScore)))
		}
	}
	if a.DRAFilterTimeout != nil && a.DRAFilterTimeout.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("draFilterTimeout"), a.DRAFilterTimeout.Duration.String(), "must not be negative"))
	}
	if a.Proportional != nil {
		p := path.Child("proportional", "resources")
		if len(a.Proportional.Resources) == 0 {
			errs = append(errs, field.Required(p, "name at least one resource"))
		}
		errs = append(errs, validateReservations(a.Proportional.Resources, p)...)
	}
	return errs
}

// Default implements PluginArgs. The defaults are Volcano's.
func (a *NetworkTopologyAwareArgs) Default() {
	setInt32(&a.Weight, 1)
	setInt32(&a.BinpackCPU, 1)
	setInt32(&a.BinpackMemory, 1)
	setBool(&a.NormalPodBinpack, true)
	setFloat(&a.NormalPodFading, 0.8)
}

// Validate implements PluginArgs.
func (a *NetworkTopologyAwareArgs) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateWeight(a.Weight, path.Child("weight"))...)
	errs = append(errs, validateWeight(a.BinpackCPU, path.Child("binpackCPU"))...)
	errs = append(errs, validateWeight(a.BinpackMemory, path.Child("binpackMemory"))...)
	errs = append(errs, validateResourceNames(a.BinpackResources, path.Child("binpackResources"), true)...)
	for _, name := range slices.Sorted(maps.Keys(a.BinpackResources)) {
		w := a.BinpackResources[name]
		errs = append(errs, validateWeight(&w, path.Child("binpackResources").Key(string(name)))...)
	}
	if a.NormalPodFading != nil && !(*a.NormalPodFading >= 0) {
		errs = append(errs, field.Invalid(path.Child("normalPodFading"), *a.NormalPodFading, "must be greater than or equal to 0"))
	}
	return errs
}

// Default implements PluginArgs. The defaults are Volcano's.
func (a *NodeGroupArgs) Default() {
	setBool(&a.Strict, true)
	setBool(&a.EnablePreferredOrder, false)
}

// Validate implements PluginArgs: both switches take any value.
func (a *NodeGroupArgs) Validate(*field.Path) field.ErrorList { return nil }

// Default implements PluginArgs.
func (a *TaskTopologyArgs) Default() { setInt32(&a.Weight, 1) }

// Validate implements PluginArgs.
func (a *TaskTopologyArgs) Validate(path *field.Path) field.ErrorList {
	return validateWeight(a.Weight, path.Child("weight"))
}

// Default implements PluginArgs. The defaults are Volcano's; StaleAfter
// is the age past which Volcano stops trusting a node's metrics.
func (a *UsageArgs) Default() {
	setInt32(&a.Weight, 5)
	setInt32(&a.CPUWeight, 1)
	setInt32(&a.MemoryWeight, 1)
	setFloat(&a.Thresholds.CPU, 80)
	setFloat(&a.Thresholds.Memory, 80)
	setDuration(&a.StaleAfter, metav1.Duration{Duration: 5 * time.Minute})
}

// Validate implements PluginArgs.
func (a *UsageArgs) Validate(path *field.Path) field.ErrorList {
	errs := validateWeight(a.Weight, path.Child("weight"))
	errs = append(errs, validateWeight(a.CPUWeight, path.Child("cpuWeight"))...)
	errs = append(errs, validateWeight(a.MemoryWeight, path.Child("memoryWeight"))...)
	if a.CPUWeight != nil && a.MemoryWeight != nil && *a.CPUWeight == 0 && *a.MemoryWeight == 0 && a.Weight != nil && *a.Weight > 0 {
		errs = append(errs, field.Invalid(path.Child("cpuWeight"), 0, "cpuWeight and memoryWeight cannot both be 0 while weight scores nodes"))
	}
	tp := path.Child("thresholds")
	for _, th := range []struct {
		name string
		v    *float64
	}{{"cpu", a.Thresholds.CPU}, {"memory", a.Thresholds.Memory}} {
		name, v := th.name, th.v
		if v != nil && (*v < 0 || *v > 100 || math.IsNaN(*v)) {
			errs = append(errs, field.Invalid(tp.Child(name), *v, "must be a percentage between 0 and 100"))
		}
	}
	if a.StaleAfter != nil && a.StaleAfter.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("staleAfter"), a.StaleAfter.Duration.String(), "must be positive"))
	}
	return errs
}

// Default implements PluginArgs.
func (a *NUMAAwareArgs) Default() { setInt32(&a.Weight, 1) }

// Validate implements PluginArgs.
func (a *NUMAAwareArgs) Validate(path *field.Path) field.ErrorList {
	return validateWeight(a.Weight, path.Child("weight"))
}

// Default implements PluginArgs. The weight is Volcano's default.
func (a *ResourceStrategyFitArgs) Default() {
	setInt32(&a.Weight, 10)
	if len(a.Resources) == 0 {
		a.Resources = map[string]ResourceStrategy{
			string(corev1.ResourceCPU):    {Type: LeastAllocated},
			string(corev1.ResourceMemory): {Type: LeastAllocated},
		}
	}
	for name, r := range a.Resources {
		setInt32(&r.Weight, 1)
		a.Resources[name] = r
	}
	if a.SRA != nil {
		setInt32(&a.SRA.RetentionWeight, 1)
		if a.SRA.Policy == SRAProportional {
			if a.SRA.Proportional == nil {
				a.SRA.Proportional = map[corev1.ResourceName]ResourceReservation{}
			}
			for name := range a.SRA.Resources {
				if _, ok := a.SRA.Proportional[name]; !ok {
					a.SRA.Proportional[name] = ResourceReservation{}
				}
			}
			defaultReservations(a.SRA.Proportional)
		}
	}
}

// Validate implements PluginArgs.
func (a *ResourceStrategyFitArgs) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateWeight(a.Weight, path.Child("weight"))...)
	rp := path.Child("resources")
	for _, name := range slices.Sorted(maps.Keys(a.Resources)) {
		r := a.Resources[name]
		p := rp.Key(name)
		errs = append(errs, validateResourcePattern(name, p)...)
		switch r.Type {
		case MostAllocated, LeastAllocated:
		case "":
			errs = append(errs, field.Required(p.Child("type"), fmt.Sprintf("must be %s or %s", MostAllocated, LeastAllocated)))
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), r.Type, []ScoringStrategy{MostAllocated, LeastAllocated}))
		}
		errs = append(errs, validateWeight(r.Weight, p.Child("weight"))...)
	}
	if s := a.SRA; s != nil {
		sp := path.Child("sra")
		switch s.Policy {
		case SRARetention, SRAProportional:
		case "":
			errs = append(errs, field.Required(sp.Child("policy"), fmt.Sprintf("must be %s or %s", SRARetention, SRAProportional)))
		default:
			errs = append(errs, field.NotSupported(sp.Child("policy"), s.Policy, []SRAPolicy{SRARetention, SRAProportional}))
		}
		if len(s.Resources) == 0 {
			errs = append(errs, field.Required(sp.Child("resources"), "name at least one scarce resource"))
		}
		errs = append(errs, validateResourceNames(s.Resources, sp.Child("resources"), true)...)
		for _, name := range slices.Sorted(maps.Keys(s.Resources)) {
			w := s.Resources[name]
			errs = append(errs, validateWeight(&w, sp.Child("resources").Key(string(name)))...)
		}
		errs = append(errs, validateWeight(s.RetentionWeight, sp.Child("retentionWeight"))...)
		pp := sp.Child("proportional")
		if len(s.Proportional) > 0 && s.Policy != SRAProportional {
			errs = append(errs, field.Invalid(pp, "", fmt.Sprintf("applies only with policy %s", SRAProportional)))
		}
		errs = append(errs, validateReservations(s.Proportional, pp)...)
		for _, name := range slices.Sorted(maps.Keys(s.Proportional)) {
			if _, ok := s.Resources[name]; !ok {
				errs = append(errs, field.Invalid(pp.Key(string(name)), name, "must be one of sra.resources"))
			}
		}
	}
	return errs
}

// validateResourcePattern checks a resource name, or a prefix of resource
// names ending in a single "*".
func validateResourcePattern(name string, p *field.Path) field.ErrorList {
	if prefix, ok := strings.CutSuffix(name, "*"); ok {
		if strings.Contains(prefix, "*") {
			return field.ErrorList{field.Invalid(p, name, `"*" may appear only once, at the end`)}
		}
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}
