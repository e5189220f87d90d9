// Package controller is caldera-global's HyperJob controller on the Karmada
// API server. A HyperJob becomes child Volcano Jobs, each with a
// PropagationPolicy pinning it to one member cluster. What to do is decided
// by lifecycle.Decide from the HyperJob, its children and what the
// clusters offer; this package reads those and applies the decision:
// deletions, the plan record (written before any child of it is made, so
// that a restart makes the same children, never a second set), the
// children's policies and jobs, the status and events. The children's
// bindings are held by caldera-global's webhook and released by the
// dispatcher all together, or not at all.
package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/federation/inventory"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/pkg/hyperjob/lifecycle"
)

// ControllerName names the controller.
const ControllerName = "hyperjob"

// Reconciler runs HyperJobs.
type Reconciler struct {
	Client    client.Client
	Inventory inventory.Inventory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// StartTimeout is how long released children may take to run before
	// the HyperJob is rolled back and planned again.
	StartTimeout time.Duration
	// Retry is how often a waiting HyperJob is planned again without other
	// changes.
	Retry time.Duration
	// LostAfter is how long a member may be NotReady before the children
	// on it are lost with it (lifecycle.Input.LostAfter); 0 never.
	LostAfter time.Duration

	mu sync.Mutex
	// releasedAt is when all of a plan's children were first seen
	// released, by plan ID.
	releasedAt map[string]time.Time
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.StartTimeout <= 0 {
		r.StartTimeout = 10 * time.Minute
	}
	if r.Retry <= 0 {
		r.Retry = 30 * time.Second
	}
	r.releasedAt = map[string]time.Time{}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&trainingv1alpha1.HyperJob{}).
		Owns(&batchv1alpha1.Job{}).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.waiting)).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(r.ofBinding)).
		Complete(r)
}

// waiting lists the HyperJobs without a plan, and those with children in
// the cluster: a cluster changed, and one may fit now, or the cluster's
// children may be on their way to being lost with it.
func (r *Reconciler) waiting(ctx context.Context, obj client.Object) []reconcile.Request {
	var l trainingv1alpha1.HyperJobList
	if err := r.Client.List(ctx, &l); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range l.Items {
		if lifecycle.Waiting(&l.Items[i]) || lifecycle.Uses(&l.Items[i], obj.GetName()) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&l.Items[i])})
		}
	}
	return out
}

// ofBinding maps a child's binding to its HyperJob.
func (r *Reconciler) ofBinding(ctx context.Context, obj client.Object) []reconcile.Request {
	rb := obj.(*workv1alpha2.ResourceBinding)
	ref := rb.Spec.Resource
	if ref.Kind != "Job" || !strings.HasPrefix(ref.APIVersion, batchv1alpha1.SchemeGroupVersion.Group+"/") {
		return nil
	}
	var job batchv1alpha1.Job
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, &job); err != nil {
		return nil
	}
	if hj := job.Labels[trainingv1alpha1.HyperJobNameLabel]; hj != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: job.Namespace, Name: hj}}}
	}
	return nil
}

// Reconcile implements reconcile.Reconciler: it reads the HyperJob and its
// children, asks lifecycle.Decide (gathering the clusters' capacity or the
// children's bindings when the decision needs them) and applies the
// decision.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	hj := &trainingv1alpha1.HyperJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, hj); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	children, err := r.children(ctx, hj)
	if err != nil {
		return reconcile.Result{}, err
	}
	in := lifecycle.Input{HyperJob: hj, Children: children, StartTimeout: r.StartTimeout, Retry: r.Retry, Now: r.Clock.Now(), LostAfter: r.LostAfter}
	if r.LostAfter > 0 && len(children) > 0 {
		if in.NotReady, err = r.notReady(ctx, in.Now); err != nil {
			return reconcile.Result{}, err
		}
	}
	d := lifecycle.Decide(in)
	for d.NeedCapacity || d.NeedReleased != nil {
		if d.NeedCapacity {
			if in.Capacity, err = r.capacity(ctx); err != nil {
				return reconcile.Result{}, err
			}
		} else if in.Released, err = r.released(ctx, hj.Namespace, d.NeedReleased); err != nil {
			return reconcile.Result{}, err
		}
		d = lifecycle.Decide(in)
	}
	if d.BrokenRecord != nil {
		klog.FromContext(ctx).Error(d.BrokenRecord, "Replanning", "hyperjob", req.NamespacedName)
	}
	if d.Err != nil {
		return reconcile.Result{}, d.Err
	}
	return reconcile.Result{Requeue: d.Requeue, RequeueAfter: d.RequeueAfter}, r.apply(ctx, hj, d)
}

// apply carries a decision out in the order lifecycle.Decision gives.
func (r *Reconciler) apply(ctx context.Context, hj *trainingv1alpha1.HyperJob, d lifecycle.Decision) error {
	if d.AddFinalizer {
		controllerutil.AddFinalizer(hj, lifecycle.Finalizer)
		if err := r.Client.Update(ctx, hj); err != nil {
			return err
		}
	}
	for _, name := range d.Delete {
		if err := r.deleteChild(ctx, hj.Namespace, name); err != nil {
			return err
		}
	}
	if d.RemoveFinalizer {
		controllerutil.RemoveFinalizer(hj, lifecycle.Finalizer)
		return r.Client.Update(ctx, hj)
	}
	if d.Record != nil {
		if err := r.writeRecord(ctx, hj, d.Record); err != nil {
			return err
		}
	}
	for _, c := range d.Create {
		if err := r.Client.Create(ctx, c.Policy); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the policy of %s: %w", c.Job.Name, err)
		}
		if err := r.Client.Create(ctx, c.Job); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating child job %s: %w", c.Job.Name, err)
		}
	}
	if d.Status != nil {
		patched := hj.DeepCopy()
		patched.Status = *d.Status
		if err := r.Client.Status().Patch(ctx, patched, client.MergeFrom(hj)); err != nil {
			return err
		}
	}
	if d.CountRestart != nil {
		patched := hj.DeepCopy()
		patched.Status.RetryCount++
		patched.Status.Phase = *d.CountRestart
		if err := r.Client.Status().Patch(ctx, patched, client.MergeFromWithOptions(hj, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
	}
	for _, e := range d.Events {
		r.Recorder.Event(hj, e.Type, e.Reason, e.Message)
	}
	if d.ForgetRelease != "" {
		r.mu.Lock()
		delete(r.releasedAt, d.ForgetRelease)
		r.mu.Unlock()
	}
	return nil
}

func (r *Reconciler) children(ctx context.Context, hj *trainingv1alpha1.HyperJob) ([]batchv1alpha1.Job, error) {
	var l batchv1alpha1.JobList
	if err := r.Client.List(ctx, &l, client.InNamespace(hj.Namespace), client.MatchingLabels{trainingv1alpha1.HyperJobNameLabel: hj.Name}); err != nil {
		return nil, fmt.Errorf("listing the children of %s/%s: %w", hj.Namespace, hj.Name, err)
	}
	out := l.Items
	slices.SortFunc(out, func(a, b batchv1alpha1.Job) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// deleteChild deletes a child job and its policy.
func (r *Reconciler) deleteChild(ctx context.Context, ns, name string) error {
	for _, obj := range []client.Object{
		&batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
	} {
		if err := r.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %T %s/%s: %w", obj, ns, name, err)
		}
	}
	return nil
}

// capacity is what each Ready member has free, as its summary and its node
// pools (where the inventory knows them) say, with the pools still being
// listed.
func (r *Reconciler) capacity(ctx context.Context) (*lifecycle.Capacity, error) {
	members, err := r.Inventory.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	ready := make([]clusterv1alpha1.Cluster, 0, len(members))
	for i := range members {
		c := &members[i]
		if meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) && c.Status.ResourceSummary != nil {
			ready = append(ready, *c)
		}
	}
	pools, _ := r.Inventory.(inventory.Pools)
	c := &lifecycle.Capacity{}
	c.Clusters, c.PoolLabels = splitInput(ready, pools, false)
	if pools != nil {
		c.Listing = pools.Listing()
	}
	return c, nil
}

// notReady returns, for each member cluster whose Ready condition is not
// True, how long it has not been (since the condition last changed).
func (r *Reconciler) notReady(ctx context.Context, now time.Time) (map[string]time.Duration, error) {
	members, err := r.Inventory.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]time.Duration{}
	for _, c := range members {
		cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		if cond != nil && cond.Status != metav1.ConditionTrue {
			out[c.Name] = max(now.Sub(cond.LastTransitionTime.Time), 0)
		}
	}
	return out, nil
}

// released reports whether every child's binding is released (placed in a
// cluster by the dispatcher, or handed to Karmada's scheduler), and since
// when this controller has seen them so.
func (r *Reconciler) released(ctx context.Context, ns string, q *lifecycle.ReleaseQuery) (*lifecycle.Released, error) {
	for _, name := range q.Children {
		var rb workv1alpha2.ResourceBinding
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name + "-job"}, &rb)
		if apierrors.IsNotFound(err) {
			return &lifecycle.Released{}, nil
		}
		if err != nil {
			return nil, err
		}
		if rb.Spec.SchedulingSuspended() && len(rb.Spec.Clusters) == 0 {
			return &lifecycle.Released{}, nil
		}
	}
	r.mu.Lock()
	at, ok := r.releasedAt[q.Plan]
	if !ok {
		at = r.Clock.Now()
		r.releasedAt[q.Plan] = at
	}
	r.mu.Unlock()
	return &lifecycle.Released{All: true, For: r.Clock.Since(at)}, nil
}

// writeRecord replaces the HyperJob's plan record.
func (r *Reconciler) writeRecord(ctx context.Context, hj *trainingv1alpha1.HyperJob, rec *lifecycle.Record) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	patched := hj.DeepCopy()
	if patched.Annotations == nil {
		patched.Annotations = map[string]string{}
	}
	patched.Annotations[lifecycle.PlanRecordAnnotation] = string(raw)
	if err := r.Client.Patch(ctx, patched, client.MergeFromWithOptions(hj, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	hj.ObjectMeta = patched.ObjectMeta
	return nil
}
