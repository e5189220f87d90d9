//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
)

// RunDurationAnnotation makes kwok finish a pod after that long running
// (pkg/controlplane/kwokstages).
const RunDurationAnnotation = "pod.caldera.sh/run-duration"

// loadLabel marks the load's jobs.
const loadLabel = "chaos.caldera.sh/load"

// The load's leaf queues (examples/preemption/01-queues.yaml), with how
// often a job goes to each: two research teams that borrow and are
// reclaimed from, and production, which is never reclaimed from.
var loadQueues = []struct {
	name   string
	weight int
}{{"research-vision", 4}, {"research-speech", 3}, {"production-serve", 3}}

// load submits a steady mix of jobs until stopped: gangs of 2, 4 and 8
// pods, single pods and elastic jobs (2 of 6 pods at least), mostly of
// priority batch-low with one in five batch-urgent, so that preemption
// (within a queue) and reclaim (between queues) keep happening. A create
// the API server or the webhook refuses is retried, as a user's client
// would; at most maxInFlight jobs are unfinished at a time.
type load struct {
	c           client.Client
	rng         *rand.Rand
	every       time.Duration
	maxInFlight int

	mu        sync.Mutex
	submitted []string
	refused   int
	// lastSubmit is when the last job was created; lastErr the last
	// refusal of a create or failure of the in-flight count, and when.
	lastSubmit   time.Time
	lastErr      string
	lastErrAt    time.Time
	lastInFlight int
	// untrusted are refusals because the API server did not trust the
	// webhook's certificate: each breaks certificate rotation.
	untrusted []string
	done      map[string]bool
}

func newLoad(c client.Client, seed uint64, every time.Duration, maxInFlight int) *load {
	return &load{c: c, rng: rand.New(rand.NewPCG(seed, 0x5eed)), every: every, maxInFlight: maxInFlight, done: map[string]bool{}}
}

// run submits until ctx ends.
func (l *load) run(ctx context.Context) {
	tick := time.NewTicker(l.every)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if l.inFlight(ctx) >= l.maxInFlight {
			continue
		}
		j := l.job(i)
		for ctx.Err() == nil {
			// A user's client gives up on a request that hangs (a
			// connection to an API server that went away) and retries.
			rctx, cancel := context.WithTimeout(ctx, requestTimeout)
			err := l.c.Create(rctx, j.DeepCopy())
			cancel()
			if err == nil || apierrors.IsAlreadyExists(err) {
				// Already there: an earlier attempt was applied, its
				// answer lost.
				break
			}
			l.mu.Lock()
			l.refused++
			l.lastErr, l.lastErrAt = "create "+j.Name+": "+err.Error(), time.Now()
			if strings.Contains(err.Error(), "x509") {
				l.untrusted = append(l.untrusted, err.Error())
			}
			l.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
		if ctx.Err() == nil {
			l.mu.Lock()
			l.submitted = append(l.submitted, j.Name)
			l.lastSubmit = time.Now()
			l.mu.Unlock()
		}
	}
}

// Untrusted returns the creates refused because the API server did not
// trust the webhook's certificate.
func (l *load) Untrusted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.untrusted)
}

// completed says whether the load has seen the job Completed.
func (l *load) completed(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done[name]
}

// inFlight counts the submitted jobs not yet seen finished.
func (l *load) inFlight(ctx context.Context) (n int) {
	var jobs batchv1alpha1.JobList
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if err := l.c.List(rctx, &jobs, client.InNamespace("default"), client.HasLabels{loadLabel}); err != nil {
		l.mu.Lock()
		l.lastErr, l.lastErrAt = "listing the load's jobs: "+err.Error(), time.Now()
		l.mu.Unlock()
		return l.maxInFlight
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	defer func() { l.lastInFlight = n }()
	n = 0
	for _, j := range jobs.Items {
		if j.Status.State.Phase == batchv1alpha1.JobCompleted {
			l.done[j.Name] = true
			continue
		}
		n++
	}
	return n
}

// loadTTL is the load's Jobs' ttlSecondsAfterFinished: a finished Job and
// its pods are deleted that long after it completes, as a batch cluster
// is run, so that finished pods do not pile up on the nodes (a deleted
// node's pods are garbage-collected one by one, and a long run left 900
// finished pods on one). It is well above how long the load takes to see
// a Job Completed (every tick, and through a fault), so that a Job the
// load never saw finish is still there to be found lost.
const loadTTL = 2 * time.Minute

// requestTimeout bounds each of the load's requests.
const requestTimeout = 30 * time.Second

// stalled says why the load has not submitted for longer than d while it
// had room to ("" when it has, or was full of unfinished jobs).
func (l *load) stalled(d time.Duration) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lastSubmit.IsZero() || time.Since(l.lastSubmit) < d || l.lastInFlight >= l.maxInFlight {
		return ""
	}
	return fmt.Sprintf("the load has submitted nothing for %s (last %s; %d in flight of %d; last error %s ago: %s)",
		time.Since(l.lastSubmit).Round(time.Second), l.submitted[len(l.submitted)-1], l.lastInFlight, l.maxInFlight,
		time.Since(l.lastErrAt).Round(time.Second), l.lastErr)
}

// snapshot returns the names submitted so far and how many creates were
// refused.
func (l *load) snapshot() ([]string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.submitted...), l.refused
}

// job draws the i-th job of the mix.
func (l *load) job(i int) *batchv1alpha1.Job {
	queue := pick(l.rng)
	priority := "batch-low"
	if l.rng.IntN(5) == 0 {
		priority = "batch-urgent"
	}
	var kind string
	var replicas, minAvailable int32
	var taskMin *int32
	cpu := "2"
	switch r := l.rng.IntN(10); {
	case r < 2:
		kind, replicas, minAvailable, cpu = "single", 1, 1, "1"
	case r < 4:
		// The task's minAvailable too: it defaults to its replicas.
		kind, replicas, minAvailable, taskMin = "elastic", 6, 2, new(int32(2))
	default:
		n := []int32{2, 4, 8}[l.rng.IntN(3)]
		kind, replicas, minAvailable = fmt.Sprintf("gang%d", n), n, n
	}
	run := time.Duration(8+l.rng.IntN(15)) * time.Second
	var policies []batchv1alpha1.LifecyclePolicy
	if strings.HasPrefix(kind, "gang") {
		// As a distributed training job is: a gang that loses a member
		// (its node gone, its pod evicted) starts again whole.
		policies = []batchv1alpha1.LifecyclePolicy{{Events: []batchv1alpha1.Event{batchv1alpha1.PodEvictedEvent, batchv1alpha1.PodFailedEvent}, Action: busv1alpha1.RestartJobAction}}
	}
	return &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("load-%04d-%s", i, kind), Labels: map[string]string{loadLabel: kind}},
		Spec: batchv1alpha1.JobSpec{
			SchedulerName: "volcano", Queue: queue, MinAvailable: minAvailable, PriorityClassName: priority,
			TTLSecondsAfterFinished: new(int32(loadTTL / time.Second)),
			// Preemption and reclaim restart jobs; the load's jobs must
			// finish however often that happens.
			MaxRetry: 1000, Policies: policies,
			Tasks: []batchv1alpha1.TaskSpec{{
				Name: "worker", Replicas: replicas, MinAvailable: taskMin,
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{RunDurationAnnotation: run.String()}},
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")},
						}}},
					},
				},
			}},
		},
	}
}

func pick(rng *rand.Rand) string {
	total := 0
	for _, q := range loadQueues {
		total += q.weight
	}
	n := rng.IntN(total)
	for _, q := range loadQueues {
		if n < q.weight {
			return q.name
		}
		n -= q.weight
	}
	return loadQueues[0].name
}
