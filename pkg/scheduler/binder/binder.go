// Package binder binds placed pods to their nodes through the pods/binding
// subresource, asynchronously and with bounded concurrency, so that a cycle
// never waits on the API server.
package binder

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// PodBinder performs one bind; the Kubernetes implementation posts a
// Binding, tests record.
type PodBinder interface {
	Bind(ctx context.Context, binding *corev1.Binding) error
	// BoundNode reads the node the pod is bound to ("" when it is not
	// bound); exists is false when the pod is gone (deleted, or replaced by
	// another pod of the same name).
	BoundNode(ctx context.Context, namespace, name string, uid types.UID) (node string, exists bool, err error)
}

// Assumer is the part of the cache the binder drives.
type Assumer interface {
	Assume(task *api.TaskInfo, node string)
	// AssumeGroup assumes placements decided on a snapshot together, or
	// refuses them all when one no longer fits the node as it is now.
	AssumeGroup(placements []api.Placement) error
	Forget(uid types.UID)
	// Confirm records that an assumed task is bound to node, which is
	// not the node it was assumed on.
	Confirm(uid types.UID, node string)
	// Gone drops a task whose pod the API server no longer has, which the
	// pod informer has not shown yet: binding it again could only fail.
	Gone(uid types.UID)
}

// PreBinder prepares a pod's node before the bind, e.g. binds its volumes,
// and releases what was reserved for a pod whose bind failed or was dropped.
type PreBinder interface {
	PreBind(ctx context.Context, task *api.TaskInfo, node string) error
	Unreserve(ctx context.Context, task *api.TaskInfo)
}

// Result is what became of one bind.
type Result struct {
	Task *api.TaskInfo
	Node string
	// Err is nil on success; ErrGangAborted when the bind was dropped
	// because another bind of the same job failed.
	Err      error
	Duration time.Duration
}

// ErrGangAborted marks binds dropped after a bind of the same job failed.
var ErrGangAborted = fmt.Errorf("another pod of the job failed to bind; the job is retried whole")

// Options configure a binder.
type Options struct {
	Concurrency int
	Timeout     time.Duration
	PreBinder   PreBinder
	// OnResult, if set, is called after each bind (from a worker).
	OnResult func(Result)
}

type request struct {
	task  *api.TaskInfo
	node  string
	epoch uint64
}

// Binder is the asynchronous binder.
type Binder struct {
	pods  PodBinder
	cache Assumer
	opts  Options
	queue chan request
	// urgent holds the binds of Urgent's sink: they go before the queue's,
	// and a few workers serve only them.
	urgent chan request
	mu     sync.Mutex
	epochs map[api.JobID]uint64
	// onNode counts the binds queued or in flight per node.
	onNode  map[string]int
	pending sync.WaitGroup
}

var _ framework.GroupBindSink = &Binder{}

// New returns a binder; call Run to start its workers.
func New(pods PodBinder, cache Assumer, o Options) *Binder {
	if o.Concurrency < 1 {
		o.Concurrency = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	return &Binder{
		pods:   pods,
		cache:  cache,
		opts:   o,
		queue:  make(chan request, queueLength(o.Concurrency)),
		urgent: make(chan request, queueLength(o.Concurrency)),
		epochs: map[api.JobID]uint64{},
		onNode: map[string]int{},
	}
}

// queueLength is how many binds wait for a worker before Bind blocks the
// cycle: enough to keep every worker busy, and few enough that a cycle
// placing far faster than the API server takes binds does not hold
// thousands of placed pods' state (a DRA pod's holds the plugin's
// allocator, a map of every node's slices) until their binds.
func queueLength(concurrency int) int {
	return max(4*concurrency, 256)
}

// Bind assumes the placement in the cache and queues the bind. It is the
// session's bind sink.
func (b *Binder) Bind(task *api.TaskInfo, node string) {
	b.cache.Assume(task, node)
	b.enqueue(task, node, b.queue)
}

func (b *Binder) enqueue(task *api.TaskInfo, node string, queue chan request) {
	b.mu.Lock()
	epoch := b.epochs[task.Job]
	b.onNode[node]++
	b.mu.Unlock()
	b.pending.Add(1)
	queue <- request{task: task.Clone(), node: node, epoch: epoch}
}

// BindGroup assumes a statement's placements in the cache, checked
// against it (Assumer.AssumeGroup), and queues their binds; when the cache
// refuses them, nothing is queued and the refusal is returned.
func (b *Binder) BindGroup(ps []api.Placement) error {
	return b.bindGroup(ps, b.queue)
}

func (b *Binder) bindGroup(ps []api.Placement, queue chan request) error {
	if err := b.cache.AssumeGroup(ps); err != nil {
		return err
	}
	for _, p := range ps {
		b.enqueue(p.Task, p.Node, queue)
	}
	return nil
}

// Urgent returns a sink whose binds go before every bind queued through
// the binder itself (the fast lane's, which must not wait behind a cycle's
// thousands of gang binds), on the same workers and accounts; a few
// workers serve only them.
func (b *Binder) Urgent() framework.GroupBindSink { return urgentSink{b} }

type urgentSink struct{ b *Binder }

func (u urgentSink) Bind(task *api.TaskInfo, node string) {
	u.b.cache.Assume(task, node)
	u.b.enqueue(task, node, u.b.urgent)
}

func (u urgentSink) BindGroup(ps []api.Placement) error { return u.b.bindGroup(ps, u.b.urgent) }

// urgentWorkers is how many workers serve only urgent binds.
func urgentWorkers(concurrency int) int { return max(1, concurrency/8) }

// Run starts the workers and blocks until ctx ends and the queued binds are
// done. Every worker takes an urgent bind before a queued one; a few take
// only urgent binds.
func (b *Binder) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range b.opts.Concurrency {
		wg.Go(func() {
			for {
				select {
				case req := <-b.urgent:
					b.bind(ctx, req)
					continue
				default:
				}
				select {
				case <-ctx.Done():
					return
				case req := <-b.urgent:
					b.bind(ctx, req)
				case req := <-b.queue:
					b.bind(ctx, req)
				}
			}
		})
	}
	for range urgentWorkers(b.opts.Concurrency) {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case req := <-b.urgent:
					b.bind(ctx, req)
				}
			}
		})
	}
	wg.Wait()
}

// Wait blocks until every queued bind has finished (for tests and the
// simulator).
func (b *Binder) Wait() { b.pending.Wait() }

// Drain waits until every queued bind has finished, for at most timeout,
// and reports whether they all did. Run must still be running: the
// scheduler stops deciding, then drains, then stops the binder.
func (b *Binder) Drain(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() {
		b.pending.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Busy reports whether binds to node are queued or in flight.
func (b *Binder) Busy(node string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.onNode[node] > 0
}

func (b *Binder) bind(ctx context.Context, req request) {
	defer b.pending.Done()
	defer func() {
		b.mu.Lock()
		if b.onNode[req.node]--; b.onNode[req.node] <= 0 {
			delete(b.onNode, req.node)
		}
		b.mu.Unlock()
	}()
	start := time.Now()
	t := req.task
	b.mu.Lock()
	aborted := req.epoch < b.epochs[t.Job]
	b.mu.Unlock()
	var err error
	if aborted {
		err = ErrGangAborted
	} else {
		err = b.bindOne(ctx, req)
	}
	gone := false
	if err != nil && !aborted && (outcomeUnknown(err) || apierrors.IsNotFound(err)) {
		// The bind may have been applied (the answer was lost with the
		// connection, or another bind won): until the pod says, its room
		// stays taken, or the node could be given twice. Or the pod is gone
		// (409 on its UID, 404), and the cache must stop offering it.
		node, exists, ok := b.resolve(ctx, t)
		switch {
		case ok && !exists:
			gone = true
		case ok && node != "":
			if node != req.node {
				b.cache.Confirm(t.UID, node)
			}
			klog.FromContext(ctx).V(2).Info("Bind answered with an error, but the pod is bound", "pod", klog.KRef(t.Namespace, t.Name), "node", node, "err", err)
			err = nil
		}
	}
	if err != nil {
		if b.opts.PreBinder != nil {
			b.opts.PreBinder.Unreserve(ctx, t)
		}
		b.cache.Forget(t.UID)
		if gone {
			b.cache.Gone(t.UID)
		}
		if !aborted {
			b.mu.Lock()
			b.epochs[t.Job]++
			b.mu.Unlock()
			klog.FromContext(ctx).Info("Bind failed; the job's remaining binds are dropped", "pod", klog.KRef(t.Namespace, t.Name), "node", req.node, "err", err)
		}
	}
	if b.opts.OnResult != nil {
		b.opts.OnResult(Result{Task: t, Node: req.node, Err: err, Duration: time.Since(start)})
	}
}

func (b *Binder) bindOne(ctx context.Context, req request) error {
	ctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	defer cancel()
	t := req.task
	if b.opts.PreBinder != nil {
		if err := b.opts.PreBinder.PreBind(ctx, t, req.node); err != nil {
			return fmt.Errorf("preparing node %s for %s/%s: %w", req.node, t.Namespace, t.Name, err)
		}
	}
	binding := &corev1.Binding{
		// The API server copies a binding's annotations onto the pod, so
		// that the cards a task was given arrive with its node.
		ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name, UID: t.UID, Annotations: t.BindAnnotations(time.Now())},
		Target:     corev1.ObjectReference{Kind: "Node", Name: req.node},
	}
	if err := b.pods.Bind(ctx, binding); err != nil {
		return fmt.Errorf("binding %s/%s to %s: %w", t.Namespace, t.Name, req.node, err)
	}
	return nil
}

// outcomeUnknown reports whether a failed bind may have been applied: the
// connection failed or timed out before the answer, the server failed
// (5xx), or the pod is already bound (409). Other refusals (403, 404, 422,
// 429) were not applied.
func outcomeUnknown(err error) bool {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code := st.Status().Code
		return code == http.StatusConflict || code == http.StatusRequestTimeout || code >= 500 || code == 0
	}
	return true
}

// resolve reads where the task's pod is bound and whether it still exists,
// retrying (with back-off, as long as ctx lasts) while the API server cannot
// answer. ok is false when ctx ended first.
func (b *Binder) resolve(ctx context.Context, t *api.TaskInfo) (node string, exists, ok bool) {
	delay := 100 * time.Millisecond
	for {
		rctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
		node, exists, err := b.pods.BoundNode(rctx, t.Namespace, t.Name, t.UID)
		cancel()
		if err == nil {
			return node, exists, true
		}
		klog.FromContext(ctx).V(2).Info("Reading a pod whose bind failed; retrying", "pod", klog.KRef(t.Namespace, t.Name), "err", err, "after", delay)
		select {
		case <-ctx.Done():
			return "", false, false
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}
