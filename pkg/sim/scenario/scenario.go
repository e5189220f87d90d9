// Package scenario describes a simulation in YAML (a cluster of node
// groups or trace nodes, queues, a scheduler configuration, a workload of
// trace tasks and generated jobs), runs it through the simulator, and
// reports what happened: a record per job and summary figures.
package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
)

// Scenario is a simulation to run.
type Scenario struct {
	// Name names the run in reports.
	Name string `json:"name"`
	// Seed makes generated workloads (and so the whole run) repeatable.
	Seed uint64 `json:"seed,omitempty"`
	// Scheduler is a scheduler configuration, in either of the scheduler's
	// formats (docs/scheduler-configuration.md); empty means the defaults.
	Scheduler string `json:"scheduler,omitempty"`
	// Cluster is the simulated cluster; or Clusters, several member
	// clusters under the global dispatcher (caldera-global's decisions:
	// queues across clusters, capacity, fair share).
	Cluster  *Cluster  `json:"cluster,omitempty"`
	Clusters []Cluster `json:"clusters,omitempty"`
	// Federation tunes the global dispatcher, with Clusters.
	Federation *Federation `json:"federation,omitempty"`
	// Queues are created under root; a default queue is added when none
	// is named default.
	Queues []Queue `json:"queues,omitempty"`
	// Workload is what is submitted.
	Workload Workload `json:"workload"`
	// LoadAware models what pods really use, publishes the nodes' usage
	// to the scheduler and may run the load-aware descheduler.
	LoadAware *LoadAware `json:"loadAware,omitempty"`
	// Until stops the run at this simulated time from the start; unset
	// runs until every job finished or nothing more can start.
	Until *metav1.Duration `json:"until,omitempty"`

	// dir resolves the relative paths of the scenario's files.
	dir string
}

// Federation tunes the global dispatcher.
type Federation struct {
	// StarvationWait is how long a job that fits no cluster may be passed
	// over before it reserves the one closest to holding it; 0 never.
	StarvationWait metav1.Duration `json:"starvationWait,omitempty"`
	// HyperJobStartTimeout is how long a HyperJob's released children may
	// take to start before all are deleted and it is planned again, as
	// caldera-global's --hyperjob-start-timeout; 0 means its default, 10m.
	HyperJobStartTimeout metav1.Duration `json:"hyperJobStartTimeout,omitempty"`
}

// DefaultHyperJobStartTimeout is caldera-global's default start timeout.
const DefaultHyperJobStartTimeout = 10 * time.Minute

// Cluster is the nodes.
type Cluster struct {
	// Name names a member cluster (with Clusters); its nodes are named
	// <cluster>-<node>.
	Name       string      `json:"name,omitempty"`
	NodeGroups []NodeGroup `json:"nodeGroups,omitempty"`
	// Trace adds a trace's nodes.
	Trace *NodeTrace `json:"trace,omitempty"`
}

// NodeGroup is count nodes alike, named <name>-<i>.
type NodeGroup struct {
	Name      string              `json:"name"`
	Count     int                 `json:"count"`
	Resources corev1.ResourceList `json:"resources"`
	Labels    map[string]string   `json:"labels,omitempty"`
}

// NodeTrace reads nodes from a trace file.
type NodeTrace struct {
	// Format is the trace's format: alibaba (the 2023 GPU trace's node
	// list).
	Format string `json:"format"`
	Nodes  string `json:"nodes"`
	// Limit keeps the first Limit nodes; 0 keeps all.
	Limit int `json:"limit,omitempty"`
	// GPUCards gives each node its GPU cards as Volcano's device plugin
	// advertises them (volcano.sh/gpu-number, and volcano.sh/gpu-memory of
	// 1000 per card, so that a card's memory counts its thousandths), for
	// the deviceshare plugin to place tasks on cards. The milli-GPUs stay,
	// for the accounts.
	GPUCards bool `json:"gpuCards,omitempty"`
	// VGPU gives each node its GPU cards as Volcano's vGPU device plugin
	// registers them (volcano.sh/node-vgpu-register, 10 virtual GPUs per
	// card, 1000 of memory per card so that memory counts thousandths of
	// a card, 100 cores), for the deviceshare plugin's vgpu kind. The
	// milli-GPUs stay, for the accounts.
	VGPU bool `json:"vgpu,omitempty"`
	// MIG, with vgpu, registers every GPU card in MIG mode as a card of
	// this model (such as A100-SXM4-80GB, one with a shipped geometry),
	// with the memory of its whole-card instance, so that a share takes
	// the smallest instance that holds it. The trace's GPU models stay on
	// the nodes' labels.
	MIG string `json:"mig,omitempty"`
	// DRA publishes each GPU node's cards as Dynamic Resource Allocation
	// devices: a ResourceSlice per node of driver gpu.sim.caldera.sh, a
	// device per card that several claims may share, with a memory
	// capacity of 1000Mi (so that memory counts thousandths of a card) and
	// the card's model as an attribute; the DeviceClass gpu.sim.caldera.sh
	// selects them. The scheduler needs the predicates plugin's
	// dynamicResourceAllocation.
	DRA bool `json:"dra,omitempty"`
}

// Queue is a queue under root.
type Queue struct {
	Name       string              `json:"name"`
	Weight     int32               `json:"weight,omitempty"`
	Capability corev1.ResourceList `json:"capability,omitempty"`
	Deserved   corev1.ResourceList `json:"deserved,omitempty"`
	Guarantee  corev1.ResourceList `json:"guarantee,omitempty"`
	Priority   int32               `json:"priority,omitempty"`
}

// Workload is trace tasks and generated jobs.
type Workload struct {
	Trace      *TaskTrace  `json:"trace,omitempty"`
	Generators []Generator `json:"generators,omitempty"`
	// HyperJobs are split over the member clusters (with clusters) by the
	// HyperJob split, and their children released all together.
	HyperJobs []HyperJobGenerator `json:"hyperJobs,omitempty"`
}

// HyperJobGenerator makes Count HyperJobs of Accelerators accelerators
// each, in pods of Pod's requests (PodAccelerators of them per pod), split
// as Mode says: auto (as few children as the members' free capacity
// allows, within MaxDomains) or static (Replicas equal children).
type HyperJobGenerator struct {
	Name         string              `json:"name"`
	Queue        string              `json:"queue,omitempty"`
	Count        int                 `json:"count"`
	Interarrival metav1.Duration     `json:"interarrival,omitempty"`
	Runtime      metav1.Duration     `json:"runtime"`
	Mode         string              `json:"mode,omitempty"`
	Replicas     int32               `json:"replicas,omitempty"`
	MaxDomains   int32               `json:"maxDomains,omitempty"`
	Accelerator  string              `json:"accelerator"`
	Accelerators int64               `json:"accelerators"`
	Pod          corev1.ResourceList `json:"pod"`
	Start        metav1.Duration     `json:"start,omitempty"`
}

// TaskTrace replays a trace's tasks, each a job of one pod.
type TaskTrace struct {
	// Format is alibaba (the 2023 GPU trace's task lists).
	Format string `json:"format"`
	Tasks  string `json:"tasks"`
	// Limit replays the first Limit tasks; 0 replays all.
	Limit int `json:"limit,omitempty"`
	// Queue is the queue of the tasks; default by default.
	Queue string `json:"queue,omitempty"`
	// TimeScale divides the trace's arrival times (2 replays twice as
	// fast); runtimes are kept. 0 means 1.
	TimeScale float64 `json:"timeScale,omitempty"`
	// AllAtOnce submits every task at the start, as the "fill the
	// cluster" experiments do: they are taken in trace order.
	AllAtOnce bool `json:"allAtOnce,omitempty"`
	// Repeat replays the list this many times (copies named
	// <task>-<copy>), each copy after the last one ends; 0 means once.
	Repeat int `json:"repeat,omitempty"`
	// GPUCards asks for cards as Volcano's GPU sharing does: a task sharing
	// a GPU asks for its gpu_milli of one card's volcano.sh/gpu-memory, a
	// task of whole GPUs for volcano.sh/gpu-number, beside its milli-GPUs.
	// The nodes need gpuCards too.
	GPUCards bool `json:"gpuCards,omitempty"`
	// VGPU asks for virtual GPUs: a task sharing a GPU for one of its
	// gpu_milli thousandths of a card's memory and as many tenths of a
	// percent of its cores, a task of whole GPUs for that many whole
	// cards (all their memory and cores). The nodes need vgpu too.
	VGPU bool `json:"vgpu,omitempty"`
	// MIG, with vgpu, asks for a share as a pod sized for a MIG instance
	// does: its gpu_milli thousandths of the memory of the cards of
	// cluster.trace.mig (MiB, rounded up), and no cores; it gets the
	// smallest instance that holds it. A task of whole GPUs asks for that
	// many whole cards.
	MIG bool `json:"mig,omitempty"`
	// DRA asks for GPUs with a ResourceClaim, as one made from the pod's
	// claim template: a task sharing a GPU for one device with its
	// gpu_milli of the device's memory (Mi), a task of whole GPUs for that
	// many devices, each all of its memory. The nodes need dra too.
	DRA bool `json:"dra,omitempty"`
	// Sample draws the tasks instead of replaying them in order.
	Sample *TaskSample `json:"sample,omitempty"`
}

// TaskSample draws tasks at random from the list (with replacement, by the
// scenario's seed; tasks the trace never scheduled included) until their
// GPU requests come to GPULoad times the cluster's GPUs, and submits them
// all at the start in the order drawn, none finishing: the "fill the
// cluster" experiment of Weng et al. (USENIX ATC 2023).
type TaskSample struct {
	// GPULoad is the GPUs asked for, as a multiple of the cluster's; the
	// paper uses 1.3.
	GPULoad float64 `json:"gpuLoad"`
}

// Generator makes Count jobs of Tasks pods each (a gang of MinAvailable,
// default all), arriving with exponential gaps of mean Interarrival and
// running for exponential times of mean Runtime (or exactly Runtime with
// FixedRuntime).
type Generator struct {
	Name         string              `json:"name"`
	Queue        string              `json:"queue,omitempty"`
	Count        int                 `json:"count"`
	Tasks        int32               `json:"tasks,omitempty"`
	MinAvailable int32               `json:"minAvailable,omitempty"`
	Interarrival metav1.Duration     `json:"interarrival,omitempty"`
	Runtime      metav1.Duration     `json:"runtime"`
	FixedRuntime bool                `json:"fixedRuntime,omitempty"`
	Requests     corev1.ResourceList `json:"requests"`
	// NodeSelector places the pods, as a pod's would.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// PriorityClass gives the jobs this priority value.
	Priority int32 `json:"priority,omitempty"`
	// Start is when the first job may arrive.
	Start metav1.Duration `json:"start,omitempty"`
}

// Load reads a scenario file, strictly: an unknown field, or a value
// that makes no sense, is an error naming it.
func Load(path string) (*Scenario, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.dir = filepath.Dir(path)
	return s, nil
}

// Parse reads a scenario; relative paths are relative to the working
// directory.
func Parse(raw []byte) (*Scenario, error) {
	s := &Scenario{}
	if err := yaml.UnmarshalStrict(raw, s); err != nil {
		return nil, err
	}
	if errs := s.validate(); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return s, nil
}

// path resolves a file of the scenario.
func (s *Scenario) path(p string) string {
	if filepath.IsAbs(p) || s.dir == "" {
		return p
	}
	return filepath.Join(s.dir, p)
}

func (s *Scenario) validate() field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(field.NewPath("name"), "names the run in its reports"))
	}
	switch {
	case s.Cluster != nil && len(s.Clusters) > 0:
		errs = append(errs, field.Invalid(field.NewPath("clusters"), len(s.Clusters), "give cluster (one) or clusters (a federation), not both"))
	case s.Cluster != nil:
		if s.Federation != nil {
			errs = append(errs, field.Invalid(field.NewPath("federation"), "", "needs clusters: a federation of members"))
		}
		errs = append(errs, validateCluster(s.Cluster, field.NewPath("cluster"), false)...)
	case len(s.Clusters) > 0:
		seen := map[string]bool{}
		for i := range s.Clusters {
			p := field.NewPath("clusters").Index(i)
			errs = append(errs, validateCluster(&s.Clusters[i], p, true)...)
			if seen[s.Clusters[i].Name] {
				errs = append(errs, field.Duplicate(p.Child("name"), s.Clusters[i].Name))
			}
			seen[s.Clusters[i].Name] = true
		}
	default:
		errs = append(errs, field.Required(field.NewPath("cluster"), "cluster or clusters: the simulation needs nodes"))
	}
	if s.LoadAware != nil {
		if err := s.LoadAware.complete(); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("loadAware"), "", err.Error()))
		}
	}
	queues := map[string]bool{"default": true}
	for i, q := range s.Queues {
		p := field.NewPath("queues").Index(i)
		for _, msg := range validation.IsDNS1123Label(q.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), q.Name, msg))
		}
		if q.Name == "root" {
			errs = append(errs, field.Invalid(p.Child("name"), q.Name, "root is the cluster itself; name its children"))
		}
		if q.Weight < 0 {
			errs = append(errs, field.Invalid(p.Child("weight"), q.Weight, "must not be negative"))
		}
		queues[q.Name] = true
	}
	wp := field.NewPath("workload")
	if s.Workload.Trace == nil && len(s.Workload.Generators) == 0 && len(s.Workload.HyperJobs) == 0 {
		errs = append(errs, field.Required(wp, "trace, generators or hyperJobs: nothing would be submitted"))
	}
	if t := s.Workload.Trace; t != nil {
		p := wp.Child("trace")
		if t.Format != "alibaba" {
			errs = append(errs, field.NotSupported(p.Child("format"), t.Format, []string{"alibaba"}))
		}
		if t.Tasks == "" {
			errs = append(errs, field.Required(p.Child("tasks"), "the task list file"))
		}
		if t.Queue != "" && !queues[t.Queue] {
			errs = append(errs, field.NotFound(p.Child("queue"), t.Queue))
		}
		if t.TimeScale < 0 {
			errs = append(errs, field.Invalid(p.Child("timeScale"), t.TimeScale, "must not be negative"))
		}
		if t.Limit < 0 {
			errs = append(errs, field.Invalid(p.Child("limit"), t.Limit, "must not be negative"))
		}
		if t.Repeat < 0 {
			errs = append(errs, field.Invalid(p.Child("repeat"), t.Repeat, "must not be negative"))
		}
		if t.Sample != nil {
			if !(t.Sample.GPULoad > 0) {
				errs = append(errs, field.Invalid(p.Child("sample", "gpuLoad"), t.Sample.GPULoad, "must be positive"))
			}
			if t.Repeat > 1 {
				errs = append(errs, field.Invalid(p.Child("repeat"), t.Repeat, "a sample draws as many tasks as its gpuLoad asks; repeat has no meaning with it"))
			}
		}
		if t.GPUCards && !s.anyNodeTrace(func(n *NodeTrace) bool { return n.GPUCards }) {
			errs = append(errs, field.Invalid(p.Child("gpuCards"), true, "the tasks ask for GPU cards, and no cluster's trace nodes have them: set gpuCards in cluster.trace too"))
		}
		if t.VGPU && !s.anyNodeTrace(func(n *NodeTrace) bool { return n.VGPU }) {
			errs = append(errs, field.Invalid(p.Child("vgpu"), true, "the tasks ask for virtual GPUs, and no cluster's trace nodes register them: set vgpu in cluster.trace too"))
		}
		if t.MIG && !t.VGPU {
			errs = append(errs, field.Invalid(p.Child("mig"), true, "MIG-sized requests are virtual GPUs: set vgpu too"))
		}
		if t.MIG && !s.anyNodeTrace(func(n *NodeTrace) bool { return n.MIG != "" }) {
			errs = append(errs, field.Invalid(p.Child("mig"), true, "the tasks ask for MIG instances, and no cluster's trace nodes have MIG cards: set mig in cluster.trace too"))
		}
		if t.DRA && !s.anyNodeTrace(func(n *NodeTrace) bool { return n.DRA }) {
			errs = append(errs, field.Invalid(p.Child("dra"), true, "the tasks ask for DRA devices, and no cluster's trace nodes publish them: set dra in cluster.trace too"))
		}
		if kinds := countTrue(t.GPUCards, t.VGPU, t.DRA); kinds > 1 {
			errs = append(errs, field.Invalid(p, fmt.Sprintf("gpuCards: %t, vgpu: %t, dra: %t", t.GPUCards, t.VGPU, t.DRA),
				"a task asks for one of GPU cards (gpuCards), virtual GPUs (vgpu) and DRA devices (dra)"))
		}
	}
	gens := map[string]bool{}
	// common checks what every kind of generator has: a unique name, a
	// known queue, a count, a runtime.
	common := func(p *field.Path, name, queue string, count int, runtime time.Duration) {
		for _, msg := range validation.IsDNS1123Label(name) {
			errs = append(errs, field.Invalid(p.Child("name"), name, msg))
		}
		if gens[name] {
			errs = append(errs, field.Duplicate(p.Child("name"), name))
		}
		gens[name] = true
		if queue != "" && !queues[queue] {
			errs = append(errs, field.NotFound(p.Child("queue"), queue))
		}
		if count < 1 {
			errs = append(errs, field.Invalid(p.Child("count"), count, "must be at least 1"))
		}
		if runtime <= 0 {
			errs = append(errs, field.Invalid(p.Child("runtime"), runtime.String(), "must be positive"))
		}
	}
	for i, g := range s.Workload.Generators {
		p := wp.Child("generators").Index(i)
		common(p, g.Name, g.Queue, g.Count, g.Runtime.Duration)
		if g.Tasks < 0 || g.MinAvailable < 0 || g.MinAvailable > max(g.Tasks, 1) {
			errs = append(errs, field.Invalid(p.Child("minAvailable"), g.MinAvailable, "must be between 0 (all) and tasks"))
		}
		if len(g.Requests) == 0 {
			errs = append(errs, field.Required(p.Child("requests"), "each pod's requests"))
		}
	}
	for i, h := range s.Workload.HyperJobs {
		p := wp.Child("hyperJobs").Index(i)
		if len(s.Clusters) == 0 {
			errs = append(errs, field.Invalid(p, h.Name, "HyperJobs need clusters: they are split over members"))
		}
		common(p, h.Name, h.Queue, h.Count, h.Runtime.Duration)
		if h.Mode != "" && h.Mode != "auto" && h.Mode != "static" {
			errs = append(errs, field.NotSupported(p.Child("mode"), h.Mode, []string{"auto", "static"}))
		}
		if h.Mode == "static" && h.Replicas < 1 {
			errs = append(errs, field.Invalid(p.Child("replicas"), h.Replicas, "static splits need at least 1 replica"))
		}
		q, ok := h.Pod[corev1.ResourceName(h.Accelerator)]
		if h.Accelerator == "" || !ok || q.IsZero() {
			errs = append(errs, field.Invalid(p.Child("accelerator"), h.Accelerator, "the pod must request it"))
		}
		if h.Accelerators < 1 {
			errs = append(errs, field.Invalid(p.Child("accelerators"), h.Accelerators, "must be at least 1"))
		}
	}
	if f := s.Federation; f != nil && (f.StarvationWait.Duration < 0 || f.HyperJobStartTimeout.Duration < 0) {
		errs = append(errs, field.Invalid(field.NewPath("federation"), fmt.Sprintf("starvationWait %s, hyperJobStartTimeout %s", f.StarvationWait.Duration, f.HyperJobStartTimeout.Duration), "durations must not be negative"))
	}
	if s.Until != nil && s.Until.Duration <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("until"), s.Until.Duration.String(), "must be positive"))
	}
	return errs
}

// anyNodeTrace reports whether some cluster's trace nodes are as has
// says.
func (s *Scenario) anyNodeTrace(has func(*NodeTrace) bool) bool {
	if s.Cluster != nil && s.Cluster.Trace != nil && has(s.Cluster.Trace) {
		return true
	}
	for _, c := range s.Clusters {
		if c.Trace != nil && has(c.Trace) {
			return true
		}
	}
	return false
}

// countTrue counts the true ones.
func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// validateCluster checks a cluster; named says whether it is a member,
// which needs a name.
func validateCluster(c *Cluster, cp *field.Path, named bool) field.ErrorList {
	var errs field.ErrorList
	if named {
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
		}
	}
	if len(c.NodeGroups) == 0 && c.Trace == nil {
		errs = append(errs, field.Required(cp, "nodeGroups or trace: the simulated cluster needs nodes"))
	}
	names := map[string]bool{}
	for i, g := range c.NodeGroups {
		p := cp.Child("nodeGroups").Index(i)
		for _, msg := range validation.IsDNS1123Label(g.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), g.Name, msg))
		}
		if names[g.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), g.Name))
		}
		names[g.Name] = true
		if g.Count < 1 {
			errs = append(errs, field.Invalid(p.Child("count"), g.Count, "must be at least 1"))
		}
		if g.Resources.Cpu().IsZero() || g.Resources.Memory().IsZero() {
			errs = append(errs, field.Required(p.Child("resources"), "cpu and memory are required"))
		}
	}
	if t := c.Trace; t != nil {
		p := cp.Child("trace")
		if t.Format != "alibaba" {
			errs = append(errs, field.NotSupported(p.Child("format"), t.Format, []string{"alibaba"}))
		}
		if t.Nodes == "" {
			errs = append(errs, field.Required(p.Child("nodes"), "the node list file"))
		}
		if t.Limit < 0 {
			errs = append(errs, field.Invalid(p.Child("limit"), t.Limit, "must not be negative"))
		}
		if t.MIG != "" {
			if !t.VGPU {
				errs = append(errs, field.Invalid(p.Child("mig"), t.MIG, "MIG cards are registered as virtual GPUs: set vgpu too"))
			}
			if vgpu.GeometryOf(nil, t.MIG) == nil {
				errs = append(errs, field.NotSupported(p.Child("mig"), t.MIG, migModels()))
			}
		}
	}
	return errs
}

// migModels are the card models with a shipped MIG geometry.
func migModels() []string {
	var out []string
	for _, g := range vgpu.DefaultGeometries() {
		out = append(out, g.Models...)
	}
	return out
}

// quantities is a resource list of whole quantities, for the cluster's
// nodes.
func quantities(cpuMilli, memMiB int64, extra map[corev1.ResourceName]int64) corev1.ResourceList {
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memMiB<<20, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(256, resource.DecimalSI),
	}
	for name, v := range extra {
		rl[name] = *resource.NewQuantity(v, resource.DecimalSI)
	}
	return rl
}

// sortedKeys are a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
