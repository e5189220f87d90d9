// Package evictor evicts the pods a cycle chose as victims through the
// Eviction API, asynchronously and with bounded concurrency, so that
// PodDisruptionBudgets apply and a cycle never waits on the API server.
package evictor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// PodEvictor performs one eviction; the Kubernetes implementation posts to
// the pod's eviction subresource, tests and the simulator record.
type PodEvictor interface {
	Evict(ctx context.Context, eviction *policyv1.Eviction) error
}

// ErrDisruptionBudget marks an eviction the API server refused because a
// PodDisruptionBudget allows no more disruptions now.
var ErrDisruptionBudget = errors.New("a PodDisruptionBudget allows no disruption now")

// Result is what became of one eviction. Err is nil when the pod was
// evicted or was already gone.
type Result struct {
	Task     *api.TaskInfo
	Reason   string
	Err      error
	Duration time.Duration
}

// Options configure an evictor.
type Options struct {
	Concurrency int
	Timeout     time.Duration
	// OnResult, if set, is called after each eviction (from a worker).
	OnResult func(Result)
}

type request struct {
	task   *api.TaskInfo
	reason string
}

// Evictor is the asynchronous evictor.
type Evictor struct {
	pods     PodEvictor
	opts     Options
	queue    chan request
	mu       sync.Mutex
	inFlight map[types.UID]bool
	pending  sync.WaitGroup
}

var _ framework.EvictSink = &Evictor{}

// New returns an evictor; call Run to start its workers.
func New(pods PodEvictor, o Options) *Evictor {
	if o.Concurrency < 1 {
		o.Concurrency = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	return &Evictor{pods: pods, opts: o, queue: make(chan request, 4096), inFlight: map[types.UID]bool{}}
}

// Evict queues the eviction of the task's pod; a pod already queued or
// being evicted is not queued again. It is the session's evict sink.
func (e *Evictor) Evict(task *api.TaskInfo, reason string) {
	e.mu.Lock()
	if e.inFlight[task.UID] {
		e.mu.Unlock()
		return
	}
	e.inFlight[task.UID] = true
	e.mu.Unlock()
	e.pending.Add(1)
	e.queue <- request{task: task.Clone(), reason: reason}
}

// Run starts the workers and blocks until ctx ends.
func (e *Evictor) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range e.opts.Concurrency {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case req := <-e.queue:
					e.evict(ctx, req)
				}
			}
		})
	}
	wg.Wait()
}

// Wait blocks until every queued eviction has finished (for tests and the
// simulator).
func (e *Evictor) Wait() { e.pending.Wait() }

func (e *Evictor) evict(ctx context.Context, req request) {
	defer e.pending.Done()
	start := time.Now()
	err := e.evictOne(ctx, req.task)
	e.mu.Lock()
	delete(e.inFlight, req.task.UID)
	e.mu.Unlock()
	if e.opts.OnResult != nil {
		e.opts.OnResult(Result{Task: req.task, Reason: req.reason, Err: err, Duration: time.Since(start)})
	}
}

func (e *Evictor) evictOne(ctx context.Context, t *api.TaskInfo) error {
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	uid := t.UID
	eviction := &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name},
		// Only this pod: a pod recreated under the same name is not the
		// victim the cycle chose.
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}},
	}
	err := e.pods.Evict(ctx, eviction)
	switch {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Gone already, or replaced by another pod of the same name.
		return nil
	case apierrors.IsTooManyRequests(err):
		return fmt.Errorf("evicting %s/%s: %w", t.Namespace, t.Name, ErrDisruptionBudget)
	default:
		return fmt.Errorf("evicting %s/%s: %w", t.Namespace, t.Name, err)
	}
}
