package scenario

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	"github.com/caldera-sh/caldera/pkg/hyperjob/split"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/sim/trace"
)

// job is a job to submit.
type job struct {
	name, queue string
	arrival     time.Duration
	runtime     time.Duration
	tasks, min  int32
	requests    corev1.ResourceList
	models      []string
	selector    map[string]string
	priority    string
	// dra asks for the GPUs with a ResourceClaim.
	dra bool
	// qos is the trace task's QoS class ("" for generated jobs).
	qos string
	// gang, gangSize and clusters are a HyperJob child's: released with
	// its siblings, to the cluster its plan gave it.
	gang     string
	gangSize int
	clusters []string
}

// podGroup is the job's PodGroup: its gang, queue and priority.
func (j job) podGroup() *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: j.name},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: j.min, Queue: j.queue, PriorityClassName: j.priority},
	}
}

// pod is the job's t-th pod, pending, held to the job's GPU models when
// it names any.
func (j job) pod(t int32) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("%s-%d", j.name, t),
			Annotations: map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: j.name}},
		Spec: corev1.PodSpec{
			SchedulerName: "volcano", PriorityClassName: j.priority, NodeSelector: j.selector,
			Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: j.requests}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	if len(j.models) > 0 {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: trace.GPUModelLabel, Operator: corev1.NodeSelectorOpIn, Values: j.models,
			}}}},
		}}}
	}
	return p
}

// recreated is the pod the job controller makes again for an evicted
// one, pending, named for the job's evictions so far.
func recreated(p *corev1.Pod, evictions int) *corev1.Pod {
	q := p.DeepCopy()
	q.UID, q.ResourceVersion, q.Spec.NodeName, q.DeletionTimestamp, q.Status = "", "", "", nil, corev1.PodStatus{Phase: corev1.PodPending}
	q.Name = fmt.Sprintf("%s-r%d", p.Name, evictions)
	return q
}

// podRequests are what a simulated pod requests: its one container's.
func podRequests(p *corev1.Pod) corev1.ResourceList {
	return p.Spec.Containers[0].Resources.Requests
}

// arrivals are the workload's jobs and HyperJobs in arrival order, and how
// many of each have arrived.
type arrivals struct {
	jobs                  []job
	hyperJobs             []hyperJob
	nextJob, nextHyperJob int
}

// next is when the next job or HyperJob arrives; ok is false when all have.
func (a *arrivals) next() (at time.Duration, ok bool) {
	at = time.Duration(math.MaxInt64)
	if a.nextJob < len(a.jobs) {
		at, ok = a.jobs[a.nextJob].arrival, true
	}
	if a.nextHyperJob < len(a.hyperJobs) && a.hyperJobs[a.nextHyperJob].arrival < at {
		at, ok = a.hyperJobs[a.nextHyperJob].arrival, true
	}
	return at, ok
}

// due takes the jobs and HyperJobs that arrive by at.
func (a *arrivals) due(at time.Duration) ([]job, []hyperJob) {
	j, h := a.nextJob, a.nextHyperJob
	for a.nextJob < len(a.jobs) && a.jobs[a.nextJob].arrival <= at {
		a.nextJob++
	}
	for a.nextHyperJob < len(a.hyperJobs) && a.hyperJobs[a.nextHyperJob].arrival <= at {
		a.nextHyperJob++
	}
	return a.jobs[j:a.nextJob], a.hyperJobs[h:a.nextHyperJob]
}

// hyperJob is a HyperJob to split once the members have room.
type hyperJob struct {
	name, queue string
	arrival     time.Duration
	runtime     time.Duration
	// attempt counts the plans rolled back.
	attempt int
	in      *split.Input
	pod     corev1.ResourceList
}

func priorityClass(v int32) string { return fmt.Sprintf("sim-priority-%d", v) }

// jobs are the scenario's jobs in arrival order, and how many trace tasks
// were left out as never scheduled; gpuCapacity is the cluster's GPUs, in
// the trace's milli-GPUs, for a sample.
func (s *Scenario) jobs(gpuCapacity float64) ([]job, int, error) {
	var out []job
	unscheduled := 0
	if t := s.Workload.Trace; t != nil {
		f, err := os.Open(s.path(t.Tasks))
		if err != nil {
			return nil, 0, fmt.Errorf("workload.trace.tasks: %w", err)
		}
		defer f.Close()
		tasks, err := trace.ReadTasks(f)
		if err != nil {
			return nil, 0, fmt.Errorf("workload.trace.tasks %s: %w", t.Tasks, err)
		}
		if t.Sample == nil {
			unscheduled = tasks.Unscheduled
		}
		list := tasks.Tasks
		if t.Limit > 0 && len(list) > t.Limit {
			list = list[:t.Limit]
		}
		queue := t.Queue
		if queue == "" {
			queue = schedulingv1beta1.DefaultQueue
		}
		scale := t.TimeScale
		if scale == 0 {
			scale = 1
		}
		var span time.Duration
		if n := len(list); n > 0 {
			span = list[n-1].Arrival + time.Second
		}
		var copies []trace.Task
		if t.Sample != nil {
			copies = s.sample(append(slices.Clone(list), tasks.Never...), t.Sample.GPULoad*gpuCapacity)
		} else {
			for c := range max(t.Repeat, 1) {
				for _, task := range list {
					if c > 0 {
						task.Name = fmt.Sprintf("%s-%d", task.Name, c)
						task.Arrival += time.Duration(c) * span
					}
					copies = append(copies, task)
				}
			}
		}
		for _, task := range copies {
			req := corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(task.CPUMilli, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(task.MemoryMiB<<20, resource.BinarySI),
			}
			if task.GPUMilli > 0 {
				req[trace.GPUMilli] = *resource.NewQuantity(task.GPUMilli, resource.DecimalSI)
				if t.GPUCards {
					if task.GPUMilli < 1000 {
						req[api.ResourceGPUMemory] = *resource.NewQuantity(task.GPUMilli, resource.DecimalSI)
					} else {
						req[api.ResourceGPUNumber] = *resource.NewQuantity(task.GPUs, resource.DecimalSI)
					}
				}
				switch {
				case t.VGPU && t.MIG:
					// Sized for an instance: the task's share of the MIG
					// card's memory, in MiB rounded up.
					card := s.migCardMemory()
					number, memory := int64(1), (task.GPUMilli*card+999)/1000
					if task.GPUMilli >= 1000 {
						number, memory = task.GPUs, card
					}
					req[vgpu.ResourceNumber] = *resource.NewQuantity(number, resource.DecimalSI)
					req[vgpu.ResourceMemory] = *resource.NewQuantity(memory, resource.DecimalSI)
				case t.VGPU:
					number, memory, cores := int64(1), task.GPUMilli, (task.GPUMilli+9)/10
					if task.GPUMilli >= 1000 {
						number, memory, cores = task.GPUs, 1000, 100
					}
					req[vgpu.ResourceNumber] = *resource.NewQuantity(number, resource.DecimalSI)
					req[vgpu.ResourceMemory] = *resource.NewQuantity(memory, resource.DecimalSI)
					req[vgpu.ResourceCores] = *resource.NewQuantity(cores, resource.DecimalSI)
				}
			}
			arrival := time.Duration(float64(task.Arrival) / scale)
			if t.AllAtOnce || t.Sample != nil {
				arrival = 0
			}
			out = append(out, job{name: task.Name, queue: queue, arrival: arrival, runtime: task.Runtime, tasks: 1, min: 1, requests: req, models: task.Models,
				dra: t.DRA && task.GPUMilli > 0, qos: task.QoS})
		}
	}
	for gi, g := range s.Workload.Generators {
		rng := rand.New(rand.NewPCG(s.Seed, uint64(gi)))
		tasks := max(g.Tasks, 1)
		gang := g.MinAvailable
		if gang == 0 {
			gang = tasks
		}
		queue := g.Queue
		if queue == "" {
			queue = schedulingv1beta1.DefaultQueue
		}
		at := g.Start.Duration
		for i := range g.Count {
			if i > 0 && g.Interarrival.Duration > 0 {
				at += time.Duration(rng.ExpFloat64() * float64(g.Interarrival.Duration))
			}
			runtime := g.Runtime.Duration
			if !g.FixedRuntime {
				runtime = time.Duration(rng.ExpFloat64() * float64(g.Runtime.Duration))
			}
			j := job{name: fmt.Sprintf("%s-%05d", g.Name, i), queue: queue, arrival: at.Truncate(time.Millisecond), runtime: runtime.Truncate(time.Millisecond),
				tasks: tasks, min: gang, requests: g.Requests, selector: g.NodeSelector}
			if g.Priority != 0 {
				j.priority = priorityClass(g.Priority)
			}
			out = append(out, j)
		}
	}
	slices.SortStableFunc(out, func(a, b job) int { return byArrival(a.arrival, b.arrival, a.name, b.name) })
	return out, unscheduled, nil
}

// sample draws tasks from pool, with replacement, until their milli-GPUs
// come to gpuMilli, named s<draw>-<task> so that name order is draw order.
// An empty pool, or one without GPU tasks, draws nothing.
func (s *Scenario) sample(pool []trace.Task, gpuMilli float64) []trace.Task {
	if !slices.ContainsFunc(pool, func(t trace.Task) bool { return t.GPUMilli > 0 }) {
		return nil
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x5a3b1e))
	var out []trace.Task
	var sum float64
	for i := 0; sum < gpuMilli; i++ {
		t := pool[rng.IntN(len(pool))]
		t.Name = fmt.Sprintf("s%06d-%s", i, t.Name)
		sum += float64(t.GPUMilli)
		out = append(out, t)
	}
	return out
}

// hyperJobs are the scenario's HyperJobs in arrival order.
func (s *Scenario) hyperJobs() []hyperJob {
	var out []hyperJob
	for gi, g := range s.Workload.HyperJobs {
		rng := rand.New(rand.NewPCG(s.Seed, uint64(1000+gi)))
		queue := g.Queue
		if queue == "" {
			queue = schedulingv1beta1.DefaultQueue
		}
		acc := corev1.ResourceName(g.Accelerator)
		per := g.Pod[acc]
		at := g.Start.Duration
		for i := range g.Count {
			if i > 0 && g.Interarrival.Duration > 0 {
				at += time.Duration(rng.ExpFloat64() * float64(g.Interarrival.Duration))
			}
			name := fmt.Sprintf("%s-%05d", g.Name, i)
			rj := split.ReplicatedJob{Name: "train", Mode: split.Auto, Replicas: max(g.Replicas, 1), Accelerator: acc, Accelerators: g.Accelerators,
				Fixed: dispatch.Resources{}, Pod: dispatch.ResourcesOf(g.Pod), PodAccelerators: per.Value(), MinPods: 1}
			if g.Mode == "static" {
				rj.Mode = split.Static
			}
			out = append(out, hyperJob{name: name, queue: queue, arrival: at.Truncate(time.Millisecond), runtime: g.Runtime.Duration, pod: g.Pod,
				in: &split.Input{Name: name, ReplicatedJobs: []split.ReplicatedJob{rj}, MaxDomains: g.MaxDomains}})
		}
	}
	slices.SortStableFunc(out, func(a, b hyperJob) int { return byArrival(a.arrival, b.arrival, a.name, b.name) })
	return out
}

// byArrival orders by arrival, then name.
func byArrival(a, b time.Duration, aName, bName string) int {
	return cmp.Or(cmp.Compare(a, b), strings.Compare(aName, bName))
}
