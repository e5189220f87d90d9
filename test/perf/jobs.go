package perf

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	sctesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
)

// creationWorkers bounds the benchmark's own requests in flight.
const creationWorkers = 32

// jobLabel names, on every pod, the job it belongs to.
const jobLabel = "perf.caldera.sh/job"

// job is one job of a run: a single pod, or a PodGroup and its pods.
type job struct {
	name string
	// index is the job's place in the run's order.
	index int
	group *JobGroup
	pods  []string
	// created is when the benchmark sent the job's first create request.
	created time.Time
}

// expandJobs lists the jobs of a size. In stream mode the groups are
// interleaved in proportion to their counts, so that the arrival mix is even.
func expandJobs(w *Workload, size string) []*job {
	var jobs []*job
	type cursor struct {
		g    *JobGroup
		n, i int
	}
	var cs []*cursor
	for i := range w.Jobs {
		g := &w.Jobs[i]
		cs = append(cs, &cursor{g: g, n: w.Sizes[size].Jobs[g.Name]})
	}
	next := func(c *cursor) {
		j := &job{name: fmt.Sprintf("%s-%05d", c.g.Name, c.i), group: c.g}
		for p := range int(c.g.PodsPerJob) {
			name := j.name
			if c.g.Kind == JobKindGang {
				name = fmt.Sprintf("%s-%03d", j.name, p)
			}
			j.pods = append(j.pods, name)
		}
		j.index = len(jobs)
		jobs = append(jobs, j)
		c.i++
	}
	if w.Mode == ModeBacklog {
		for _, c := range cs {
			for c.i < c.n {
				next(c)
			}
		}
		return jobs
	}
	for {
		// The group furthest behind its share goes next.
		var best *cursor
		for _, c := range cs {
			if c.i < c.n && (best == nil || float64(c.i)/float64(c.n) < float64(best.i)/float64(best.n)) {
				best = c
			}
		}
		if best == nil {
			return jobs
		}
		next(best)
	}
}

// pod returns the job's pod of the given name for the scheduler, asking
// for its devices of d (nil: the nodes have none).
func (j *job) pod(ns, name, schedulerName string, d *Devices) *corev1.Pod {
	p := benchPod(ns, name, schedulerName, j.name, j.group.Requests)
	if j.group.Kind == JobKindGang {
		p.Group(j.name)
	}
	pod := p.Obj()
	if d != nil && j.group.Devices > 0 {
		res := &pod.Spec.Containers[0].Resources
		for name, q := range d.limits(j.group.Devices) {
			if res.Limits == nil {
				res.Limits = corev1.ResourceList{}
			}
			res.Requests[name], res.Limits[name] = q, q
		}
		if d.Kind == DeviceDRA {
			withClaim(pod)
		}
	}
	return pod
}

// podGroup returns the PodGroup of a gang, with minResources set as
// Volcano's job controller sets it.
func (j *job) podGroup(ns string) *schedulingv1beta1.PodGroup {
	minResources := corev1.ResourceList{}
	for name, q := range j.group.Requests {
		total := q.DeepCopy()
		total.Mul(int64(j.group.PodsPerJob))
		minResources[name] = total
	}
	return sctesting.MakePodGroup(j.name, ns).
		MinMember(j.group.PodsPerJob).
		Queue(schedulingv1beta1.DefaultQueue).
		MinResources(minResources).
		Obj()
}

// createJob creates a job's PodGroup, then its pods with a few requests in
// flight, and records when it started.
func createJob(ctx context.Context, env *Environment, ns, schedulerName string, d *Devices, j *job) error {
	j.created = time.Now()
	if j.group.Kind == JobKindGang {
		if err := env.Client.Create(ctx, j.podGroup(ns)); err != nil {
			return fmt.Errorf("creating PodGroup %s: %w", j.name, err)
		}
	}
	// A few of a gang's pods in flight at once, as a job controller creates
	// them.
	const perJob = 8
	return forEach(ctx, j.pods, perJob, func(ctx context.Context, name string) error {
		p, err := env.Clientset.CoreV1().Pods(ns).Create(ctx, j.pod(ns, name, schedulerName, d), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating pod %s: %w", name, err)
		}
		if len(p.Spec.ResourceClaims) > 0 {
			return createClaim(ctx, env, p, j.group.Devices)
		}
		return nil
	})
}

// createBacklog creates every job with creationWorkers jobs in flight.
func createBacklog(ctx context.Context, env *Environment, ns string, schedulerName func(*job) string, d *Devices, jobs []*job) error {
	return forEach(ctx, jobs, creationWorkers, func(ctx context.Context, j *job) error {
		return createJob(ctx, env, ns, schedulerName(j), d, j)
	})
}

// splitArrivals divides the jobs of a run into those created before the
// scheduler starts and those streamed in after.
func splitArrivals(w *Workload, jobs []*job) (backlog, stream []*job) {
	for _, j := range jobs {
		if w.Mode == ModeBacklog || j.group.Backlog {
			backlog = append(backlog, j)
		} else {
			stream = append(stream, j)
		}
	}
	return backlog, stream
}

// createStream starts creating one job every 1/rate seconds, at most
// creationWorkers at once, so that a slow create does not delay the next
// arrival unless that many are slow. It returns when the last job has been
// created. A job's latency counts from its first create request.
func createStream(ctx context.Context, env *Environment, ns string, schedulerName func(*job) string, d *Devices, jobs []*job, rate float64) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	slots := make(chan struct{}, creationWorkers)
	var wg sync.WaitGroup
	for i, j := range jobs {
		select {
		case <-time.After(time.Until(start.Add(time.Duration(i) * interval))):
		case <-ctx.Done():
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := createJob(ctx, env, ns, schedulerName(j), d, j); err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}
