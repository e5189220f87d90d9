// Package controller is caldera-global's dispatcher on the Karmada API
// server: it watches the member Clusters, the Volcano Queues, the
// ResourceBindings of queued work (those of Volcano Jobs, and those the
// webhook marked with their queue) and the Jobs themselves, and whenever
// something changes it decides (pkg/federation/dispatch) which held
// bindings to release, and tells each held Job why it waits, with an
// event, whenever the reason or its numbers change. A heartbeat re-decides
// too, so that waiting jobs reach their starvation wait without other
// changes.
//
// A binding is released by placing it: the dispatcher writes its
// spec.clusters, the member the decision counted it on, and leaves
// spec.suspension.scheduling as the webhook set it. Karmada's binding
// controller propagates the work to that member; Karmada's scheduler,
// which ignores suspended bindings, never moves it; and Karmada's resource
// detector, which rewrites a binding's placement from its policy whenever
// it re-applies the policy (after creation, on every restart of
// karmada-controller-manager), never touches spec.clusters. Narrowing the
// binding's placement and lifting the suspension instead would not hold:
// the detector restores the policy's placement, and Karmada's scheduler
// then places the work by its own, lagging, view of the members.
//
// A released binding whose member, Ready, refuses to apply it (the
// binding's aggregated status says so) for longer than
// Options.ApplyFailureGrace stops counting against its queue and the
// member, and its Job is told why; Karmada keeps retrying the apply, and
// once it succeeds the work counts again. When the refusal was first seen
// and what the Job was told are kept in memory: after a restart the grace
// starts again and the Job is told again.
//
// Bindings and Jobs are converted for the decision as the watch delivers
// their changes, so a decision beside many released bindings costs little
// more than one beside few. A binding goes only where its placement allows
// (pkg/federation/placement).
//
// What it needs to survive a restart lives on the bindings: a held
// binding carries the time it was first held in the annotation
// dispatch.caldera.sh/held-since, a released one its member in
// spec.clusters.
package controller

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/datadep"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	"github.com/caldera-sh/caldera/pkg/federation/inventory"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/pkg/federation/placement"
	"github.com/caldera-sh/caldera/pkg/federation/rbwebhook"
)

// Options tune the dispatcher.
type Options struct {
	// StarvationWait is how long a job may be passed over before it
	// reserves capacity; 0 never.
	StarvationWait time.Duration
	// Coalesce is how long to gather changes before deciding.
	Coalesce time.Duration
	// Heartbeat re-decides at least this often.
	Heartbeat time.Duration
	// ReportGrace is how long after a released job's pods appear in its
	// member the dispatcher still counts the job against the member itself,
	// rather than trust the member's resource summary to include it: the
	// summary is refreshed periodically (Karmada's cluster status period).
	ReportGrace time.Duration
	// ApplyFailureGrace is how long a released binding's member may refuse
	// to apply it (Karmada retries) before the dispatcher stops counting it
	// against its queue and the member; 0 stops at once.
	ApplyFailureGrace time.Duration
	// Inventory lists the member clusters; nil lists Karmada's Clusters
	// from the dispatcher's cache.
	Inventory inventory.Inventory
	// Metrics, when set, records every decision.
	Metrics *Metrics
}

// Dispatcher releases held bindings.
type Dispatcher struct {
	client   client.Client
	cache    cache.Cache
	recorder record.EventRecorder
	clock    clock.WithTicker
	opts     Options

	trigger chan struct{}
	// memory is what decisions remember of bindings between them: where
	// released bindings were counted until Karmada places them, those
	// released that the cache may still show held, when a member was first
	// seen refusing a binding and when its pods were first seen there.
	memory dispatch.Memory
	// holds are the reasons last told, by binding.
	holds map[string]dispatch.Hold
	// refusals are the refusal messages last told, by binding.
	refusals map[string]string

	// mu guards what the watch handlers keep: each binding and Job is
	// converted once per change, so a decision's cost follows the changes
	// and the held work, not a conversion of every object.
	mu       sync.Mutex
	bindings map[string]*tracked
	jobs     map[types.NamespacedName]*jobInfo
	// claims are the DataSourceClaims by their workload's key.
	claims map[string]*ddv1alpha1.DataSourceClaim
	// pokedAt is the first change not yet decided on (zero: none).
	pokedAt time.Time
}

// tracked is a binding of queued work as the decision reads it.
type tracked struct {
	// rb is the cache's object: read, never changed.
	rb        *workv1alpha2.ResourceBinding
	job       types.NamespacedName
	isJob     bool
	queue     string
	priority  int32
	suspended bool
	// cluster is where the binding is placed ("" before), and
	// placedReplicas the replicas given there.
	cluster        string
	placedReplicas int32
	hasPods        bool
	// refusal is what the member said when it refused to apply the work
	// ("" unless it refused).
	refusal   string
	heldSince time.Time
	// placement is the key of the binding's placement (its affinities and
	// tolerations), "" for none: bindings of one policy share it.
	placement string
	// workload is the key of the binding's resource, as claims name it.
	workload string
	// claims are the claims the webhook saw for the workload.
	claims string
	// b is the binding as decisions see it: its fixed fields set here,
	// the others by each snapshot (which alone changes it).
	b *dispatch.Binding
}

// jobInfo is what the decision reads of a Volcano Job.
type jobInfo struct {
	job           *batchv1alpha1.Job
	queue         string
	priorityClass string
	finished      bool
	// gang, gangSize, gangMin: a HyperJob's child.
	gang              string
	gangSize, gangMin int
}

// New builds a dispatcher reading through c (backed by ca) and writing
// with it.
func New(c client.Client, ca cache.Cache, recorder record.EventRecorder, clk clock.WithTicker, opts Options) *Dispatcher {
	if opts.Coalesce <= 0 {
		opts.Coalesce = 50 * time.Millisecond
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 30 * time.Second
	}
	opts.ReportGrace = max(opts.ReportGrace, 0)
	opts.ApplyFailureGrace = max(opts.ApplyFailureGrace, 0)
	if opts.Inventory == nil {
		opts.Inventory = &inventory.Karmada{Cache: ca, Reader: c}
	}
	return &Dispatcher{
		client: c, cache: ca, recorder: recorder, clock: clk, opts: opts,
		trigger: make(chan struct{}, 1), holds: map[string]dispatch.Hold{}, refusals: map[string]string{},
		bindings: map[string]*tracked{}, jobs: map[types.NamespacedName]*jobInfo{}, claims: map[string]*ddv1alpha1.DataSourceClaim{},
	}
}

// Run watches and decides until ctx ends. The cache must be started.
func (d *Dispatcher) Run(ctx context.Context) error {
	if err := d.opts.Inventory.Start(ctx, d.poke); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return fmt.Errorf("following the member clusters: %w", err)
	}
	for _, obj := range []client.Object{&schedulingv1beta1.Queue{}, &workv1alpha2.ResourceBinding{}, &batchv1alpha1.Job{}, &schedulingv1.PriorityClass{}, &ddv1alpha1.DataSourceClaim{}} {
		inf, err := d.cache.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
		update := func(obj any, gone bool) {
			switch o := obj.(type) {
			case *workv1alpha2.ResourceBinding:
				d.trackBinding(o, gone)
			case *batchv1alpha1.Job:
				d.trackJob(o, gone)
			case *ddv1alpha1.DataSourceClaim:
				d.trackClaim(o, gone)
			}
			d.poke()
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { update(obj, false) },
			UpdateFunc: func(_, obj any) { update(obj, false) },
			DeleteFunc: func(obj any) {
				if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
					obj = tomb.Obj
				}
				update(obj, true)
			},
		}); err != nil {
			return err
		}
	}
	if !d.cache.WaitForCacheSync(ctx) {
		return fmt.Errorf("caches did not sync")
	}
	logger := klog.FromContext(ctx)
	heartbeat := d.clock.NewTicker(d.opts.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-d.trigger:
			// Changes gather for the coalescing window from the first of
			// them: those that came during the last decision have waited
			// already.
			d.mu.Lock()
			wait := d.opts.Coalesce - d.clock.Since(d.pokedAt)
			d.mu.Unlock()
			if wait > 0 {
				select {
				case <-ctx.Done():
					return nil
				case <-d.clock.After(wait):
				}
			}
		case <-heartbeat.C():
		}
		if err := d.Once(ctx); err != nil {
			logger.Error(err, "Dispatching failed; retrying on the next change")
		}
	}
}

func (d *Dispatcher) poke() {
	d.mu.Lock()
	if d.pokedAt.IsZero() {
		d.pokedAt = d.clock.Now()
	}
	d.mu.Unlock()
	select {
	case d.trigger <- struct{}{}:
	default:
	}
}

// Once decides and applies once.
func (d *Dispatcher) Once(ctx context.Context) error {
	start := d.clock.Now()
	s, dec, err := d.once(ctx)
	d.opts.Metrics.observe(s, dec, d.clock.Since(start), err)
	return err
}

func (d *Dispatcher) once(ctx context.Context) (*dispatch.Snapshot, *dispatch.Decision, error) {
	d.mu.Lock()
	d.pokedAt = time.Time{}
	d.mu.Unlock()
	s, byID, err := d.snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	dec := dispatch.Decide(s, dispatch.Options{StarvationWait: d.opts.StarvationWait})
	logger := klog.FromContext(ctx)
	if logger.V(2).Enabled() {
		queueOf := make(map[string]string, len(s.Bindings))
		for _, b := range s.Bindings {
			queueOf[b.ID] = b.Queue
		}
		perQueue := map[string]int{}
		for _, r := range dec.Releases {
			perQueue[queueOf[r.ID]]++
		}
		ready := 0
		for _, c := range s.Clusters {
			if c.Ready {
				ready++
			}
		}
		logger.V(2).Info("Decided", "bindings", len(s.Bindings), "readyClusters", ready, "releases", len(dec.Releases), "releasesByQueue", perQueue, "held", len(dec.Holds))
	}
	// Releases go out in parallel: each is one patch, and the decision
	// already accounted for all of them. Each is made on the binding as the
	// decision saw it (a conflict means the cache was behind: the next
	// decision sees the change and decides again), and whatever succeeded
	// is remembered even when others failed, so that no placed binding can
	// look held to the next decision.
	errs := make([]error, len(dec.Releases))
	parallel(len(dec.Releases), PatchWorkers, func(i int) {
		r := dec.Releases[i]
		rb := byID[r.ID].rb
		if err := d.client.Patch(ctx, place(rb, r.Cluster), client.MergeFromWithOptions(rb, client.MergeFromWithOptimisticLock{})); err != nil {
			errs[i] = fmt.Errorf("releasing binding %s: %w", r.ID, err)
		}
	})
	released := dec.Releases[:0:0]
	for i, r := range dec.Releases {
		if errs[i] != nil {
			continue
		}
		released = append(released, r)
		d.memory.Planned[r.ID] = r.Cluster
		d.memory.Released[r.ID] = true
		delete(d.holds, r.ID)
		if job := byID[r.ID].job; job != nil {
			d.recorder.Eventf(job, corev1.EventTypeNormal, "Dispatched", "placed in cluster %s", r.Cluster)
		}
		logger.V(2).Info("Released binding", "binding", r.ID, "cluster", r.Cluster)
	}
	dec.Releases = released
	failed := errors.Join(errs...)

	// Newly held bindings get their held-since mark, in parallel too: a
	// burst of new work is thousands of them.
	var unmarked []string
	for id := range dec.Holds {
		if _, ok := byID[id].rb.Annotations[dispatch.HeldSinceAnnotation]; !ok {
			unmarked = append(unmarked, id)
		}
	}
	heldSince := d.clock.Now().UTC().Format(time.RFC3339)
	errs = make([]error, len(unmarked))
	parallel(len(unmarked), PatchWorkers, func(i int) {
		rb := byID[unmarked[i]].rb
		patched := rb.DeepCopy()
		if patched.Annotations == nil {
			patched.Annotations = map[string]string{}
		}
		patched.Annotations[dispatch.HeldSinceAnnotation] = heldSince
		if err := d.client.Patch(ctx, patched, client.MergeFrom(rb)); err != nil {
			errs[i] = fmt.Errorf("marking binding %s held: %w", unmarked[i], err)
		}
	})
	failed = errors.Join(failed, errors.Join(errs...))
	for id, h := range dec.Holds {
		e := byID[id]
		if prev, ok := d.holds[id]; ok && prev == h {
			continue
		}
		d.holds[id] = h
		if e.job != nil {
			d.recorder.Eventf(e.job, corev1.EventTypeNormal, string(h.Rule), "held: %s", h.Message)
		}
	}
	for id := range d.holds {
		if _, ok := dec.Holds[id]; !ok {
			delete(d.holds, id)
		}
	}
	// Last, so that a placement that cannot be kept up does not hold up
	// the rest.
	return s, &dec, errors.Join(failed, d.follow(ctx))
}

// place releases a held binding to the cluster the decision counted it on:
// spec.clusters names the cluster, with all the binding's replicas, as
// Karmada's scheduler would write a placement in one cluster. The
// scheduling suspension stays, so that Karmada's scheduler never
// reschedules it; the held-since mark goes.
func place(rb *workv1alpha2.ResourceBinding, cluster string) *workv1alpha2.ResourceBinding {
	placed := rb.DeepCopy()
	placed.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: cluster, Replicas: rb.Spec.Replicas}}
	delete(placed.Annotations, dispatch.HeldSinceAnnotation)
	return placed
}

// follow keeps the dispatcher's placements up with their bindings: a
// placed binding whose replicas changed gets them in its cluster (Karmada's
// scheduler, which would do it, leaves suspended bindings alone), and the
// Job of a binding its member refuses to apply is told why, once per
// message.
func (d *Dispatcher) follow(ctx context.Context) error {
	type resize struct {
		rb      *workv1alpha2.ResourceBinding
		cluster string
	}
	type refusal struct {
		job     *batchv1alpha1.Job
		cluster string
		message string
		queue   string
	}
	var resizes []resize
	var refusals []refusal
	d.mu.Lock()
	for id, t := range d.bindings {
		if t.suspended && t.cluster != "" && len(t.rb.Spec.Clusters) == 1 && t.placedReplicas != t.rb.Spec.Replicas {
			resizes = append(resizes, resize{rb: t.rb, cluster: t.cluster})
		}
		if t.refusal == "" || !t.isJob {
			delete(d.refusals, id)
			continue
		}
		since, ok := d.memory.RefusedSince[id]
		if !ok || d.clock.Since(since) < d.opts.ApplyFailureGrace || d.refusals[id] == t.refusal {
			continue
		}
		if info := d.jobs[t.job]; info != nil {
			d.refusals[id] = t.refusal
			queue := cmp.Or(info.queue, t.queue, schedulingv1beta1.DefaultQueue)
			refusals = append(refusals, refusal{job: info.job, cluster: t.cluster, message: t.refusal, queue: queue})
		}
	}
	d.mu.Unlock()
	for _, r := range refusals {
		d.recorder.Eventf(r.job, corev1.EventTypeWarning, ReasonApplyFailed,
			"cluster %s refuses the job: %s; it no longer counts against queue %q or the cluster's room while Karmada retries applying it there",
			r.cluster, r.message, r.queue)
	}
	errs := make([]error, len(resizes))
	parallel(len(resizes), PatchWorkers, func(i int) {
		rb := resizes[i].rb
		if err := d.client.Patch(ctx, place(rb, resizes[i].cluster), client.MergeFromWithOptions(rb, client.MergeFromWithOptimisticLock{})); err != nil {
			errs[i] = fmt.Errorf("resizing binding %s/%s in cluster %s: %w", resizes[i].rb.Namespace, resizes[i].rb.Name, resizes[i].cluster, err)
		}
	})
	return errors.Join(errs...)
}

// ReasonApplyFailed is the reason of the event that tells a Job its member
// refuses it.
const ReasonApplyFailed = "ApplyFailed"

// claimGrace is how long a binding whose webhook saw a claim waits for
// the claim to reach the dispatcher's watch: beyond it, the claim is taken
// to be gone.
const claimGrace = 30 * time.Second

// PatchWorkers bounds the patches in flight.
const PatchWorkers = 16

// parallel runs f(0..n-1) on at most workers goroutines.
func parallel(n, workers int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// entry ties a snapshot binding to its objects.
type entry struct {
	rb  *workv1alpha2.ResourceBinding
	job *batchv1alpha1.Job
}

// trackBinding converts a binding of queued work (that of a Volcano Job,
// or one the webhook marked with its queue) as it changes.
func (d *Dispatcher) trackBinding(rb *workv1alpha2.ResourceBinding, gone bool) {
	id := rb.Namespace + "/" + rb.Name
	ref := rb.Spec.Resource
	isJob := strings.HasPrefix(ref.APIVersion, batchv1alpha1.SchemeGroupVersion.Group+"/") && ref.Kind == "Job"
	queue, queued := rb.Annotations[dispatch.QueueOfBindingAnnotation]
	d.mu.Lock()
	defer d.mu.Unlock()
	if gone || (!isJob && !queued) {
		// Not queued work: the webhook let it pass.
		delete(d.bindings, id)
		return
	}
	t := &tracked{rb: rb, isJob: isJob, job: types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, queue: queue,
		workload: datadep.Key(ref.APIVersion, ref.Kind, ref.Namespace, ref.Name), claims: rb.Annotations[rbwebhook.DataClaimsAnnotation]}
	if sp := rb.Spec.SchedulePriority; sp != nil {
		t.priority = sp.Priority
	}
	t.suspended = rb.Spec.SchedulingSuspended()
	if len(rb.Spec.Clusters) > 0 {
		t.cluster, t.placedReplicas = rb.Spec.Clusters[0].Name, rb.Spec.Clusters[0].Replicas
		t.hasPods = hasPods(rb, t.cluster)
		t.refusal = refusal(rb, t.cluster)
	}
	if at, err := time.Parse(time.RFC3339, rb.Annotations[dispatch.HeldSinceAnnotation]); err == nil {
		t.heldSince = at
	}
	if p := rb.Spec.Placement; p != nil && (p.ClusterAffinity != nil || len(p.ClusterAffinities) > 0 || len(p.ClusterTolerations) > 0) {
		key, err := json.Marshal([]any{p.ClusterAffinity, p.ClusterAffinities, p.ClusterTolerations})
		if err == nil {
			t.placement = string(key)
		}
	}
	t.b = &dispatch.Binding{ID: id, Created: rb.CreationTimestamp.Time, Components: components(rb), Cluster: t.cluster, HeldSince: t.heldSince}
	d.bindings[id] = t
}

// trackClaim keeps the claims by the workload they constrain.
func (d *Dispatcher) trackClaim(c *ddv1alpha1.DataSourceClaim, gone bool) {
	key := datadep.WorkloadKey(c)
	d.mu.Lock()
	defer d.mu.Unlock()
	if gone {
		if cur := d.claims[key]; cur != nil && cur.UID == c.UID {
			delete(d.claims, key)
		}
		return
	}
	d.claims[key] = c
}

// trackJob keeps what the decision reads of a Job.
func (d *Dispatcher) trackJob(j *batchv1alpha1.Job, gone bool) {
	key := types.NamespacedName{Namespace: j.Namespace, Name: j.Name}
	d.mu.Lock()
	defer d.mu.Unlock()
	if gone {
		delete(d.jobs, key)
		return
	}
	info := &jobInfo{job: j, queue: j.Spec.Queue, priorityClass: j.Spec.PriorityClassName}
	if hj := j.Labels[trainingv1alpha1.HyperJobNameLabel]; hj != "" {
		info.gang = j.Namespace + "/" + hj
		if plan := j.Annotations[trainingv1alpha1.PlanAnnotation]; plan != "" {
			info.gang += "@" + plan
		}
		info.gangSize, _ = strconv.Atoi(j.Annotations[trainingv1alpha1.ChildrenAnnotation])
		info.gangMin, _ = strconv.Atoi(j.Annotations[trainingv1alpha1.MinAvailableAnnotation])
	}
	switch j.Status.State.Phase {
	case batchv1alpha1.JobCompleted, batchv1alpha1.JobFailed, batchv1alpha1.JobTerminated, batchv1alpha1.JobAborted:
		info.finished = true
	}
	d.jobs[key] = info
}

// snapshot reads what the decision needs: the clusters, queues and
// priority classes from the cache, the bindings and Jobs as the watch
// handlers keep them.
func (d *Dispatcher) snapshot(ctx context.Context) (*dispatch.Snapshot, map[string]entry, error) {
	var queues schedulingv1beta1.QueueList
	var pcs schedulingv1.PriorityClassList
	// The cache's objects are read, never changed (patches start from
	// copies).
	for _, l := range []client.ObjectList{&queues, &pcs} {
		if err := d.client.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return nil, nil, fmt.Errorf("listing %T: %w", l, err)
		}
	}
	members, err := d.opts.Inventory.Clusters(ctx)
	if err != nil {
		return nil, nil, err
	}
	s := &dispatch.Snapshot{Now: d.clock.Now()}
	tainted := false
	ready := map[string]bool{}
	for _, c := range members {
		ready[c.Name] = clusterReady(&c)
		dc := dispatch.Cluster{Name: c.Name, Ready: clusterReady(&c), Allocatable: dispatch.Resources{}, Allocated: dispatch.Resources{}, Allocating: dispatch.Resources{}}
		if rs := c.Status.ResourceSummary; rs != nil {
			dc.Allocatable, dc.Allocated, dc.Allocating = dispatch.ResourcesOf(rs.Allocatable), dispatch.ResourcesOf(rs.Allocated), dispatch.ResourcesOf(rs.Allocating)
		}
		s.Clusters = append(s.Clusters, dc)
		tainted = tainted || len(c.Spec.Taints) > 0
	}
	for _, q := range queues.Items {
		dq := dispatch.Queue{Name: q.Name, Priority: q.Spec.Priority, Weight: max(q.Spec.Weight, 1),
			Closed: q.Status.State == schedulingv1beta1.QueueStateClosed || q.Status.State == schedulingv1beta1.QueueStateClosing}
		if len(q.Spec.Capability) > 0 {
			dq.Capability = dispatch.ResourcesOf(q.Spec.Capability)
		}
		if len(q.Spec.Guarantee.Resource) > 0 {
			dq.Guarantee = dispatch.ResourcesOf(q.Spec.Guarantee.Resource)
		}
		s.Queues = append(s.Queues, dq)
	}
	priorities := map[string]int32{}
	for _, pc := range pcs.Items {
		priorities[pc.Name] = pc.Value
	}
	// Where each placement lets work go, worked out once per placement.
	allowed := map[string][]string{}
	allowedBy := func(t *tracked) []string {
		if t.placement == "" && !tainted {
			return nil
		}
		if names, ok := allowed[t.placement]; ok {
			return names
		}
		names := []string{}
		for i := range members {
			if placement.Allows(t.rb.Spec.Placement, &members[i]) {
				names = append(names, members[i].Name)
			}
		}
		if len(names) == len(members) {
			names = nil
		}
		allowed[t.placement] = names
		return names
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	// Decisions act on held work only: its objects are looked up.
	byID := map[string]entry{}
	s.Bindings = make([]*dispatch.Binding, 0, len(d.bindings))
	graces := dispatch.Graces{Claim: claimGrace, ApplyFailure: d.opts.ApplyFailureGrace, Report: d.opts.ReportGrace}
	for id, t := range d.bindings {
		o := dispatch.Observation{Queue: cmp.Or(t.queue, schedulingv1beta1.DefaultQueue), Priority: t.priority, Allowed: allowedBy(t),
			ClaimAwaited: t.claims, Suspended: t.suspended, Cluster: t.cluster,
			Refusal: t.refusal, ClusterReady: ready[t.cluster], HasPods: t.hasPods}
		if claim := d.claims[t.workload]; claim != nil {
			c := datadep.ConstraintOf(claim, s.Now)
			o.Data = &c
		}
		var job *batchv1alpha1.Job
		if t.isJob {
			if info := d.jobs[t.job]; info != nil {
				job = info.job
				o.Job = &dispatch.JobFacts{Queue: info.queue, Priority: priorities[info.priorityClass], Finished: info.finished,
					Gang: info.gang, GangSize: info.gangSize, GangMin: info.gangMin}
			}
		}
		b := t.b
		dispatch.Observe(b, o, s.Now, graces, &d.memory)
		s.Bindings = append(s.Bindings, b)
		if !b.Released && !b.Finished {
			byID[id] = entry{rb: t.rb, job: job}
		}
	}
	d.memory.Forget(func(id string) bool { return d.bindings[id] != nil })
	for id := range d.refusals {
		if d.bindings[id] == nil {
			delete(d.refusals, id)
		}
	}
	s.Planned = d.memory.Planned
	slices.SortFunc(s.Bindings, func(a, b *dispatch.Binding) int { return strings.Compare(a.ID, b.ID) })
	return s, byID, nil
}

func clusterReady(c *clusterv1alpha1.Cluster) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == clusterv1alpha1.ClusterConditionReady {
			return cond.Status == metav1.ConditionTrue
		}
	}
	return false
}

// components are the binding's kinds of replica: its components, else
// its replicas of one requirement.
func components(rb *workv1alpha2.ResourceBinding) []dispatch.Component {
	var out []dispatch.Component
	for _, c := range rb.Spec.Components {
		dc := dispatch.Component{Name: c.Name, Replicas: c.Replicas, Request: dispatch.Resources{}}
		if c.ReplicaRequirements != nil {
			dc.Request = dispatch.ResourcesOf(c.ReplicaRequirements.ResourceRequest)
		}
		out = append(out, dc)
	}
	if len(out) == 0 && rb.Spec.Replicas > 0 {
		dc := dispatch.Component{Name: "replica", Replicas: rb.Spec.Replicas, Request: dispatch.Resources{}}
		if rr := rb.Spec.ReplicaRequirements; rr != nil {
			dc.Request = dispatch.ResourcesOf(rr.ResourceRequest)
		}
		out = append(out, dc)
	}
	return out
}

// refusal is the member's message when it refused to apply the binding's
// work ("" when it did not, or has not tried yet): Karmada reports a Work
// whose Applied condition is False or Unknown as not applied, with the
// condition's message.
func refusal(rb *workv1alpha2.ResourceBinding, cluster string) string {
	for _, s := range rb.Status.AggregatedStatus {
		if s.ClusterName == cluster && !s.Applied {
			return s.AppliedMessage
		}
	}
	return ""
}

// hasPods says whether the binding's work has pods in the member, which
// the member's resource summary then counts (pending or placed) once it is
// refreshed. For a Volcano Job, once the member's Job counts pods; for
// other work, once it is applied and healthy there.
func hasPods(rb *workv1alpha2.ResourceBinding, cluster string) bool {
	for _, s := range rb.Status.AggregatedStatus {
		if s.ClusterName != cluster || !s.Applied {
			continue
		}
		if rb.Spec.Resource.Kind == "Job" && strings.HasPrefix(rb.Spec.Resource.APIVersion, batchv1alpha1.SchemeGroupVersion.Group+"/") {
			if s.Status == nil {
				return false
			}
			var st batchv1alpha1.JobStatus
			if err := json.Unmarshal(s.Status.Raw, &st); err != nil {
				return false
			}
			return st.Pending+st.Running+st.Succeeded+st.Failed+st.Terminating+st.Unknown > 0
		}
		return s.Health == workv1alpha2.Healthy
	}
	return false
}
