package perf

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// WorkloadDir is where the workload files live, relative to this package.
const WorkloadDir = "workloads"

// The sizes every workload declares: small runs in minutes on a laptop or a
// CI machine, large is the benchmark.
const (
	SizeSmall = "small"
	SizeLarge = "large"
)

// Mode says when the jobs are created relative to the scheduler's start.
type Mode string

const (
	// ModeBacklog creates every job before the scheduler starts: the run
	// measures how fast the scheduler drains a backlog.
	ModeBacklog Mode = "backlog"
	// ModeStream creates jobs at a fixed rate while the scheduler runs: the
	// run measures end-to-end latency at that arrival rate.
	ModeStream Mode = "stream"
)

// JobKind says how a job's pods are grouped.
type JobKind string

const (
	// JobKindPod is one pod without a PodGroup; schedulers place it alone.
	JobKindPod JobKind = "pod"
	// JobKindGang is a PodGroup with minMember equal to its pod count and
	// that many pods annotated with its name.
	JobKindGang JobKind = "gang"
)

// Workload is one benchmark, read from a YAML file in WorkloadDir. The same
// file describes every size of the benchmark; only counts and rates vary.
type Workload struct {
	// Name is the file's base name without .yaml.
	Name string `json:"name"`
	// Description says what the workload measures.
	Description string `json:"description"`
	Mode        Mode   `json:"mode"`
	// Nodes is the shape of every simulated node.
	Nodes NodeShape `json:"nodes"`
	// Devices, when set, are the accelerators every node offers; a job
	// group's pods ask for its devices of them.
	Devices *Devices `json:"devices,omitempty"`
	// Jobs are the kinds of job the workload creates; how many of each a
	// size says.
	Jobs []JobGroup `json:"jobs"`
	// Saturating says the jobs are more than the nodes hold. The run ends
	// once binding has stopped; jobs left pending are expected.
	Saturating bool `json:"saturating,omitempty"`
	// Probe, when set, creates single pods one at a time after binding has
	// stopped and measures each one's creation-to-bind latency.
	Probe *Probe `json:"probe,omitempty"`
	// Sizes maps a size name to its counts. small and large are required;
	// others (medium) may be added.
	Sizes map[string]Size `json:"sizes"`
}

// NodeShape is a simulated node's allocatable resources.
type NodeShape struct {
	CPU    resource.Quantity `json:"cpu"`
	Memory resource.Quantity `json:"memory"`
	// Pods is the node's pod capacity.
	Pods int32 `json:"pods"`
}

// JobGroup is one kind of job.
type JobGroup struct {
	// Name keys the group's counts in Sizes and prefixes its objects.
	Name string  `json:"name"`
	Kind JobKind `json:"kind"`
	// PodsPerJob is the gang size; 1 for kind pod.
	PodsPerJob int32 `json:"podsPerJob"`
	// Requests of each pod's only container.
	Requests corev1.ResourceList `json:"requests"`
	// Devices is how many of the workload's devices each pod asks for.
	Devices int32 `json:"devices,omitempty"`
	// Backlog, in a stream workload, creates the group's jobs before the
	// scheduler starts, as in a backlog workload: they queue while the
	// other groups stream in.
	Backlog bool `json:"backlog,omitempty"`
	// FastLane sends the group's pods to caldera-scheduler's fast lane: they
	// name its fast-lane scheduler, and it runs with the fast lane on.
	// Other schedulers place them as any pod.
	FastLane bool `json:"fastLane,omitempty"`
}

// Size holds the counts of one size.
type Size struct {
	// Nodes is the number of simulated nodes.
	Nodes int `json:"nodes"`
	// Jobs maps each job group's name to its number of jobs.
	Jobs map[string]int `json:"jobs"`
	// JobsPerSecond is the arrival rate of jobs in stream mode.
	JobsPerSecond float64 `json:"jobsPerSecond,omitempty"`
}

// Probe describes the single pods of a latency probe.
type Probe struct {
	// Count is the number of probe pods, created one after the other.
	Count int `json:"count"`
	// Interval is the pause after one probe pod is bound and before the
	// next is created.
	Interval metav1.Duration `json:"interval"`
	// Requests of the probe pod's only container.
	Requests corev1.ResourceList `json:"requests"`
}

// LoadWorkload reads a workload by name from dir, or from a path when ref
// ends in .yaml.
func LoadWorkload(dir, ref string) (*Workload, error) {
	path := ref
	if !strings.HasSuffix(ref, ".yaml") {
		path = filepath.Join(dir, ref+".yaml")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading workload: %w", err)
	}
	w, err := ParseWorkload(b)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", path, err)
	}
	if want := strings.TrimSuffix(filepath.Base(path), ".yaml"); w.Name != want {
		return nil, fmt.Errorf("workload %s: name %q must match the file name %q", path, w.Name, want)
	}
	return w, nil
}

// WorkloadNames lists the workloads in dir, sorted.
func WorkloadNames(dir string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(matches))
	for _, m := range matches {
		names = append(names, strings.TrimSuffix(filepath.Base(m), ".yaml"))
	}
	slices.Sort(names)
	return names, nil
}

// ParseWorkload decodes a workload strictly (unknown and duplicate fields
// are errors) and validates it.
func ParseWorkload(b []byte) (*Workload, error) {
	var w Workload
	if err := yaml.UnmarshalStrict(b, &w); err != nil {
		return nil, err
	}
	if errs := w.Validate(); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &w, nil
}

// Validate checks a decoded workload, reporting every problem with its path.
func (w *Workload) Validate() field.ErrorList {
	var errs field.ErrorList
	if w.Name == "" {
		errs = append(errs, field.Required(field.NewPath("name"), ""))
	}
	switch w.Mode {
	case ModeBacklog, ModeStream:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("mode"), w.Mode, []Mode{ModeBacklog, ModeStream}))
	}
	np := field.NewPath("nodes")
	if w.Nodes.CPU.Sign() <= 0 {
		errs = append(errs, field.Invalid(np.Child("cpu"), w.Nodes.CPU.String(), "must be positive"))
	}
	if w.Nodes.Memory.Sign() <= 0 {
		errs = append(errs, field.Invalid(np.Child("memory"), w.Nodes.Memory.String(), "must be positive"))
	}
	if w.Nodes.Pods <= 0 {
		errs = append(errs, field.Invalid(np.Child("pods"), w.Nodes.Pods, "must be positive"))
	}
	jp := field.NewPath("jobs")
	if len(w.Jobs) == 0 {
		errs = append(errs, field.Required(jp, "name at least one job group"))
	}
	groups := map[string]bool{}
	for i, g := range w.Jobs {
		p := jp.Index(i)
		switch {
		case g.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case groups[g.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), g.Name))
		}
		groups[g.Name] = true
		switch g.Kind {
		case JobKindPod:
			if g.PodsPerJob != 1 {
				errs = append(errs, field.Invalid(p.Child("podsPerJob"), g.PodsPerJob, "must be 1 for kind pod"))
			}
		case JobKindGang:
			if g.PodsPerJob < 1 {
				errs = append(errs, field.Invalid(p.Child("podsPerJob"), g.PodsPerJob, "must be at least 1"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("kind"), g.Kind, []JobKind{JobKindPod, JobKindGang}))
		}
		errs = append(errs, validateRequests(g.Requests, p.Child("requests"))...)
		if g.Backlog && w.Mode != ModeStream {
			errs = append(errs, field.Invalid(p.Child("backlog"), g.Backlog, "only a stream workload has groups that stream in: in a backlog workload every group is created before the scheduler starts"))
		}
		if g.FastLane && g.Kind != JobKindPod {
			errs = append(errs, field.Invalid(p.Child("fastLane"), g.FastLane, "the fast lane places single pods: kind must be pod"))
		}
		switch {
		case g.Devices < 0:
			errs = append(errs, field.Invalid(p.Child("devices"), g.Devices, "must not be negative"))
		case g.Devices > 0 && w.Devices == nil:
			errs = append(errs, field.Invalid(p.Child("devices"), g.Devices, "the nodes offer no devices: set the workload's devices"))
		}
	}
	if w.Devices != nil {
		errs = append(errs, w.Devices.validate(field.NewPath("devices"))...)
	}
	if w.Probe != nil {
		pp := field.NewPath("probe")
		if w.Probe.Count < 1 {
			errs = append(errs, field.Invalid(pp.Child("count"), w.Probe.Count, "must be at least 1"))
		}
		if w.Probe.Interval.Duration < 0 {
			errs = append(errs, field.Invalid(pp.Child("interval"), w.Probe.Interval.Duration.String(), "must not be negative"))
		}
		errs = append(errs, validateRequests(w.Probe.Requests, pp.Child("requests"))...)
	}
	sp := field.NewPath("sizes")
	for _, required := range []string{SizeSmall, SizeLarge} {
		if _, ok := w.Sizes[required]; !ok {
			errs = append(errs, field.Required(sp.Key(required), "every workload has a small and a large size"))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.Sizes)) {
		s, p := w.Sizes[name], sp.Key(name)
		if s.Nodes < 1 {
			errs = append(errs, field.Invalid(p.Child("nodes"), s.Nodes, "must be at least 1"))
		}
		for _, g := range w.Jobs {
			if s.Jobs[g.Name] < 1 {
				errs = append(errs, field.Invalid(p.Child("jobs").Key(g.Name), s.Jobs[g.Name], "must be at least 1"))
			}
		}
		for _, g := range slices.Sorted(maps.Keys(s.Jobs)) {
			if !groups[g] {
				errs = append(errs, field.NotFound(p.Child("jobs").Key(g), g))
			}
		}
		switch {
		case w.Mode == ModeStream && s.JobsPerSecond <= 0:
			errs = append(errs, field.Required(p.Child("jobsPerSecond"), "a stream workload needs a positive arrival rate"))
		case w.Mode == ModeBacklog && s.JobsPerSecond != 0:
			errs = append(errs, field.Forbidden(p.Child("jobsPerSecond"), "a backlog workload creates every job before the scheduler starts"))
		}
	}
	return errs
}

func validateRequests(r corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r) == 0 {
		errs = append(errs, field.Required(p, "pods request resources, as batch pods do"))
	}
	for _, name := range slices.Sorted(maps.Keys(r)) {
		if q := r[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Key(string(name)), q.String(), "must not be negative"))
		}
	}
	return errs
}

// FastLane reports whether a group of the workload goes to the fast lane.
func (w *Workload) FastLane() bool {
	return slices.ContainsFunc(w.Jobs, func(g JobGroup) bool { return g.FastLane })
}

// Pods returns the number of pods the jobs of a size hold (probes not
// counted).
func (w *Workload) Pods(size string) int {
	n := 0
	for _, g := range w.Jobs {
		n += w.Sizes[size].Jobs[g.Name] * int(g.PodsPerJob)
	}
	return n
}
