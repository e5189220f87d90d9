// Package hyperjob is caldera-global's HyperJob controller on the Karmada
// API server. A HyperJob becomes child Volcano Jobs, each with a
// PropagationPolicy pinning it to one member cluster:
//
//  1. Plan: the split (pkg/federation/split) sizes and places the children
//     on what the Ready members have free. While no plan fits, the
//     HyperJob waits (condition Planned False, reason Waiting, with why)
//     and is planned again when the clusters change.
//  2. The plan is written on the HyperJob (annotation
//     hyperjob.caldera.sh/plan) before any child is made, so that a
//     restart makes the same children, never a second set.
//  3. Each child's PropagationPolicy, then the child: labelled with the
//     HyperJob and replicated job names, annotated with the plan and the
//     gang's size and minimum, owned by the HyperJob. Their bindings are
//     held by caldera-global's webhook and released by the dispatcher all
//     together, or not at all.
//  4. If the children are released but fewer than needed run within the
//     start timeout, all are deleted and the HyperJob is planned again.
//  5. The status is aggregated from the children; deleting the HyperJob
//     deletes them and their policies first (finalizer).
package hyperjob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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
	"github.com/caldera-sh/caldera/pkg/federation/hyperjob/lifecycle"
	"github.com/caldera-sh/caldera/pkg/federation/inventory"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/pkg/federation/split"
)

// ControllerName names the controller.
const ControllerName = "hyperjob"

// Finalizer keeps a deleted HyperJob until its children are gone.
const Finalizer = "hyperjob.caldera.sh/children"

// PlanRecordAnnotation holds the HyperJob's current plan.
const PlanRecordAnnotation = "hyperjob.caldera.sh/plan"

// PolicyPriority is the explicit priority of the children's policies, so
// that they win over broader policies when Karmada matches the child.
const PolicyPriority = 1000

// Record is a plan as written on the HyperJob.
type Record struct {
	// ID names the plan; its children carry it.
	ID string `json:"id"`
	// Generation is the HyperJob spec the plan was made for.
	Generation int64 `json:"generation"`
	// Attempt counts the plans made, rolled-back ones included.
	Attempt int `json:"attempt"`
	// Children are empty after a roll back, until the next plan.
	Children []Child `json:"children,omitempty"`
	// MinAvailable is how many children must be released together.
	MinAvailable int `json:"minAvailable,omitempty"`
	// Failed, when set, is why the failure policy failed the HyperJob.
	Failed string `json:"failed,omitempty"`
}

// Child is a planned child job.
type Child struct {
	Name          string `json:"name"`
	ReplicatedJob string `json:"replicatedJob"`
	Index         int32  `json:"index"`
	Cluster       string `json:"cluster"`
	Pods          int32  `json:"pods,omitempty"`
}

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

// waiting lists the HyperJobs without a plan: a cluster changed, and one
// may fit now.
func (r *Reconciler) waiting(ctx context.Context, _ client.Object) []reconcile.Request {
	var l trainingv1alpha1.HyperJobList
	if err := r.Client.List(ctx, &l); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, hj := range l.Items {
		if rec, _ := readRecord(&hj); rec == nil || len(rec.Children) == 0 {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&hj)})
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

// readRecord reads the HyperJob's plan; nil when it has none.
func readRecord(hj *trainingv1alpha1.HyperJob) (*Record, error) {
	raw, ok := hj.Annotations[PlanRecordAnnotation]
	if !ok {
		return nil, nil
	}
	rec := &Record{}
	if err := json.Unmarshal([]byte(raw), rec); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", PlanRecordAnnotation, err)
	}
	return rec, nil
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	hj := &trainingv1alpha1.HyperJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, hj); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	children, err := r.children(ctx, hj)
	if err != nil {
		return reconcile.Result{}, err
	}
	if hj.DeletionTimestamp != nil {
		return reconcile.Result{}, r.finalize(ctx, hj, children)
	}
	if !controllerutil.ContainsFinalizer(hj, Finalizer) {
		controllerutil.AddFinalizer(hj, Finalizer)
		if err := r.Client.Update(ctx, hj); err != nil {
			return reconcile.Result{}, err
		}
	}
	rec, err := readRecord(hj)
	if err != nil {
		// A broken record is replaced by a new plan; the children it made
		// are deleted first, below.
		klog.FromContext(ctx).Error(err, "Replanning", "hyperjob", req.NamespacedName)
		rec = &Record{}
	}
	if rec == nil || len(rec.Children) == 0 || rec.Generation != hj.Generation && !started(children) {
		return r.plan(ctx, hj, rec, children)
	}

	// Children of other plans go; those of this one are made.
	var current []batchv1alpha1.Job
	for _, c := range children {
		if c.Annotations[trainingv1alpha1.PlanAnnotation] == rec.ID {
			current = append(current, c)
		} else if err := r.deleteChild(ctx, c.Namespace, c.Name); err != nil {
			return reconcile.Result{}, err
		}
	}
	if rec.Failed == "" {
		if res, handled, err := r.onFailure(ctx, hj, rec, current); handled || err != nil {
			return res, err
		}
		if err := r.makeChildren(ctx, hj, rec, current); err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := r.updateStatus(ctx, hj, rec, current); err != nil {
		return reconcile.Result{}, err
	}
	if rec.Failed != "" {
		return reconcile.Result{}, nil
	}
	return r.watchStart(ctx, hj, rec, current)
}

// started reports whether any child has pods: a spec change then waits for
// the next plan rather than tearing running work down.
func started(children []batchv1alpha1.Job) bool {
	for _, c := range children {
		if c.Status.Pending+c.Status.Running+c.Status.Succeeded+c.Status.Failed > 0 {
			return true
		}
	}
	return false
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

// finalize deletes the children and their policies, then lets the
// HyperJob go.
func (r *Reconciler) finalize(ctx context.Context, hj *trainingv1alpha1.HyperJob, children []batchv1alpha1.Job) error {
	if !controllerutil.ContainsFinalizer(hj, Finalizer) {
		return nil
	}
	for _, c := range children {
		if err := r.deleteChild(ctx, c.Namespace, c.Name); err != nil {
			return err
		}
	}
	if rec, _ := readRecord(hj); rec != nil {
		for _, c := range rec.Children {
			if err := r.deleteChild(ctx, hj.Namespace, c.Name); err != nil {
				return err
			}
		}
	}
	controllerutil.RemoveFinalizer(hj, Finalizer)
	return r.Client.Update(ctx, hj)
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

// plan splits the HyperJob over the clusters now and writes the plan, or
// says why it waits.
func (r *Reconciler) plan(ctx context.Context, hj *trainingv1alpha1.HyperJob, prev *Record, children []batchv1alpha1.Job) (reconcile.Result, error) {
	// Nothing of an older plan may run beside the new one.
	for _, c := range children {
		if err := r.deleteChild(ctx, c.Namespace, c.Name); err != nil {
			return reconcile.Result{}, err
		}
	}
	if len(children) > 0 {
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	in, err := split.FromHyperJob(hj)
	if err != nil {
		return reconcile.Result{}, r.setPlanned(ctx, hj, metav1.ConditionFalse, ReasonInvalid, err.Error())
	}
	if pools, ok := r.Inventory.(inventory.Pools); ok && selectsPools(in, pools.PoolLabels()) {
		if listing := pools.Listing(); len(listing) > 0 {
			return reconcile.Result{RequeueAfter: time.Second}, r.setPlanned(ctx, hj, metav1.ConditionFalse, ReasonWaiting,
				"listing the nodes of "+strings.Join(listing, ", ")+" to know their free capacity per accelerator model")
		}
	}
	clusters, poolLabels, err := r.free(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	in.PoolLabels = poolLabels
	p, err := split.Split(in, clusters)
	var inf *split.Infeasible
	if errors.As(err, &inf) {
		return reconcile.Result{RequeueAfter: r.Retry}, r.setPlanned(ctx, hj, metav1.ConditionFalse, ReasonWaiting, "no plan fits the clusters now: "+err.Error())
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	rec := &Record{Generation: hj.Generation, Attempt: 1}
	if prev != nil {
		rec.Attempt = prev.Attempt + 1
	}
	for _, c := range p.Children {
		rec.Children = append(rec.Children, Child{Name: c.Name, ReplicatedJob: c.ReplicatedJob, Index: c.Index, Cluster: c.Cluster, Pods: c.Pods})
	}
	if hj.Spec.MinAvailable != nil {
		rec.MinAvailable = min(int(*hj.Spec.MinAvailable), len(rec.Children))
	}
	rec.ID = planID(hj, rec)
	if err := r.writeRecord(ctx, hj, rec); err != nil {
		return reconcile.Result{}, err
	}
	r.Recorder.Eventf(hj, corev1.EventTypeNormal, ReasonPlanned, "planned %d child jobs over %s", len(rec.Children), strings.Join(p.Clusters, ", "))
	return reconcile.Result{Requeue: true}, nil
}

// planID names a plan by what it is and when.
func planID(hj *trainingv1alpha1.HyperJob, rec *Record) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s/%d/%d/%d", hj.UID, hj.Generation, rec.Attempt, len(rec.Children))
	for _, c := range rec.Children {
		fmt.Fprintf(h, "/%s@%s:%d", c.Name, c.Cluster, c.Pods)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// selectsPools says whether a replicated job's pods select nodes by a pool
// label.
func selectsPools(in *split.Input, poolLabels []string) bool {
	for _, rj := range in.ReplicatedJobs {
		for k := range rj.Selector {
			if slices.Contains(poolLabels, k) {
				return true
			}
		}
	}
	return false
}

// free is what each Ready member has free, as its summary and its node
// pools (where the inventory knows them) say, and the labels the pools are
// grouped by.
func (r *Reconciler) free(ctx context.Context) ([]split.Cluster, []string, error) {
	members, err := r.Inventory.Clusters(ctx)
	if err != nil {
		return nil, nil, err
	}
	ready := make([]clusterv1alpha1.Cluster, 0, len(members))
	for i := range members {
		c := &members[i]
		if meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) && c.Status.ResourceSummary != nil {
			ready = append(ready, *c)
		}
	}
	pools, _ := r.Inventory.(inventory.Pools)
	clusters, labels := inventory.SplitInput(ready, pools, false)
	return clusters, labels, nil
}

// makeChildren creates what of the plan is missing: each child's policy,
// then the child.
func (r *Reconciler) makeChildren(ctx context.Context, hj *trainingv1alpha1.HyperJob, rec *Record, existing []batchv1alpha1.Job) error {
	have := map[string]bool{}
	for _, c := range existing {
		have[c.Name] = true
	}
	rjs := map[string]*trainingv1alpha1.ReplicatedJob{}
	for i := range hj.Spec.ReplicatedJobs {
		rjs[hj.Spec.ReplicatedJobs[i].Name] = &hj.Spec.ReplicatedJobs[i]
	}
	owner := metav1.NewControllerRef(hj, trainingv1alpha1.SchemeGroupVersion.WithKind("HyperJob"))
	for _, c := range rec.Children {
		if have[c.Name] {
			continue
		}
		rj := rjs[c.ReplicatedJob]
		if rj == nil {
			return fmt.Errorf("plan %s names replicated job %q, which the HyperJob does not have", rec.ID, c.ReplicatedJob)
		}
		pp := &policyv1alpha1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: hj.Namespace, Name: c.Name, Labels: childLabels(hj, c), OwnerReferences: []metav1.OwnerReference{*owner}},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: batchv1alpha1.SchemeGroupVersion.String(), Kind: "Job", Name: c.Name}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{c.Cluster}}},
				Priority:          new(int32(PolicyPriority)),
			},
		}
		if err := r.Client.Create(ctx, pp); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the policy of %s: %w", c.Name, err)
		}
		job := &batchv1alpha1.Job{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: hj.Namespace, Name: c.Name, Labels: childLabels(hj, c), OwnerReferences: []metav1.OwnerReference{*owner},
				Annotations: map[string]string{
					trainingv1alpha1.PlanAnnotation:         rec.ID,
					trainingv1alpha1.ChildrenAnnotation:     strconv.Itoa(len(rec.Children)),
					trainingv1alpha1.MinAvailableAnnotation: strconv.Itoa(rec.MinAvailable),
				},
			},
			Spec: split.ChildSpec(rj, &split.Child{Pods: c.Pods}),
		}
		if err := r.Client.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating child job %s: %w", c.Name, err)
		}
	}
	return nil
}

func childLabels(hj *trainingv1alpha1.HyperJob, c Child) map[string]string {
	return map[string]string{trainingv1alpha1.HyperJobNameLabel: hj.Name, trainingv1alpha1.ReplicatedJobNameLabel: c.ReplicatedJob}
}

// updateStatus writes the aggregated status and the Planned condition.
func (r *Reconciler) updateStatus(ctx context.Context, hj *trainingv1alpha1.HyperJob, rec *Record, children []batchv1alpha1.Job) error {
	now := metav1.NewTime(r.Clock.Now())
	planned := len(rec.Children)
	st := Aggregate(hj, rec, children, now)
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionPlanned, Status: metav1.ConditionTrue, Reason: ReasonPlanned,
		Message: fmt.Sprintf("%d child jobs", planned), ObservedGeneration: hj.Generation, LastTransitionTime: now})
	return r.writeStatus(ctx, hj, st)
}

// setPlanned sets the Planned condition alone.
func (r *Reconciler) setPlanned(ctx context.Context, hj *trainingv1alpha1.HyperJob, status metav1.ConditionStatus, reason, msg string) error {
	st := *hj.Status.DeepCopy()
	st.ObservedGeneration = hj.Generation
	st.Phase = trainingv1alpha1.HyperJobPending
	if reason == ReasonRolledBack {
		st.Phase = trainingv1alpha1.HyperJobRestarting
	}
	old := meta.FindStatusCondition(st.Conditions, ConditionPlanned)
	if old == nil || old.Reason != reason || old.Message != msg {
		r.Recorder.Event(hj, corev1.EventTypeNormal, reason, msg)
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionPlanned, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: hj.Generation, LastTransitionTime: metav1.NewTime(r.Clock.Now())})
	return r.writeStatus(ctx, hj, st)
}

func (r *Reconciler) writeStatus(ctx context.Context, hj *trainingv1alpha1.HyperJob, st trainingv1alpha1.HyperJobStatus) error {
	if equality.Semantic.DeepEqual(hj.Status, st) {
		return nil
	}
	patched := hj.DeepCopy()
	patched.Status = st
	return r.Client.Status().Patch(ctx, patched, client.MergeFrom(hj))
}

// onFailure applies the failure policy to failed children (see
// lifecycle.OnFailure). A restart is counted after its deletions: a crash
// between them allows one restart more, never one less.
func (r *Reconciler) onFailure(ctx context.Context, hj *trainingv1alpha1.HyperJob, rec *Record, children []batchv1alpha1.Job) (reconcile.Result, bool, error) {
	d := lifecycle.OnFailure(hj.Spec.FailurePolicy, hj.Status.RetryCount, lifecycle.Of(children))
	if d.Action == lifecycle.None {
		return reconcile.Result{}, false, nil
	}
	for _, name := range d.Delete {
		if err := r.deleteChild(ctx, hj.Namespace, name); err != nil {
			return reconcile.Result{}, true, err
		}
	}
	switch d.Action {
	case lifecycle.RestartChildren:
		r.Recorder.Event(hj, corev1.EventTypeWarning, "RestartingChild", d.Message)
		return reconcile.Result{Requeue: true}, true, r.countRestart(ctx, hj, hj.Status.Phase)
	case lifecycle.RestartAll:
		if err := r.writeRecord(ctx, hj, &Record{Generation: rec.Generation, Attempt: rec.Attempt}); err != nil {
			return reconcile.Result{}, true, err
		}
		r.Recorder.Event(hj, corev1.EventTypeWarning, "RestartingAll", d.Message)
		return reconcile.Result{Requeue: true}, true, r.countRestart(ctx, hj, trainingv1alpha1.HyperJobRestarting)
	}
	failedRec := *rec
	failedRec.Failed = d.Message
	if err := r.writeRecord(ctx, hj, &failedRec); err != nil {
		return reconcile.Result{}, true, err
	}
	r.Recorder.Event(hj, corev1.EventTypeWarning, ReasonFailed, d.Message)
	return reconcile.Result{Requeue: true}, true, nil
}

// countRestart adds one to the HyperJob's retry count and sets its phase.
func (r *Reconciler) countRestart(ctx context.Context, hj *trainingv1alpha1.HyperJob, phase trainingv1alpha1.HyperJobPhase) error {
	patched := hj.DeepCopy()
	patched.Status.RetryCount++
	patched.Status.Phase = phase
	return r.Client.Status().Patch(ctx, patched, client.MergeFromWithOptions(hj, client.MergeFromWithOptimisticLock{}))
}

// writeRecord replaces the HyperJob's plan record.
func (r *Reconciler) writeRecord(ctx context.Context, hj *trainingv1alpha1.HyperJob, rec *Record) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	patched := hj.DeepCopy()
	if patched.Annotations == nil {
		patched.Annotations = map[string]string{}
	}
	patched.Annotations[PlanRecordAnnotation] = string(raw)
	if err := r.Client.Patch(ctx, patched, client.MergeFromWithOptions(hj, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	hj.ObjectMeta = patched.ObjectMeta
	return nil
}

// watchStart rolls the HyperJob back when its children were all released
// but fewer than needed run within the start timeout (lifecycle.Start).
func (r *Reconciler) watchStart(ctx context.Context, hj *trainingv1alpha1.HyperJob, rec *Record, children []batchv1alpha1.Job) (reconcile.Result, error) {
	need := len(rec.Children)
	if rec.MinAvailable > 0 {
		need = rec.MinAvailable
	}
	states := lifecycle.Of(children)
	if lifecycle.Running(states) >= need {
		r.forget(rec.ID)
		return reconcile.Result{}, nil
	}
	if len(children) < len(rec.Children) {
		return reconcile.Result{}, nil
	}
	released, err := r.allReleased(ctx, children)
	if err != nil || !released {
		return reconcile.Result{}, err
	}
	r.mu.Lock()
	at, ok := r.releasedAt[rec.ID]
	if !ok {
		at = r.Clock.Now()
		r.releasedAt[rec.ID] = at
	}
	r.mu.Unlock()
	d := lifecycle.Start(need, states, r.Clock.Since(at), r.StartTimeout)
	if !d.RollBack {
		return reconcile.Result{RequeueAfter: d.Wait}, nil
	}
	// Roll back: every child goes, and the next plan starts over.
	for _, c := range children {
		if err := r.deleteChild(ctx, c.Namespace, c.Name); err != nil {
			return reconcile.Result{}, err
		}
	}
	r.forget(rec.ID)
	r.Recorder.Event(hj, corev1.EventTypeWarning, ReasonRolledBack, d.Message)
	if err := r.writeRecord(ctx, hj, &Record{Generation: rec.Generation, Attempt: rec.Attempt}); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{Requeue: true}, r.setPlanned(ctx, hj, metav1.ConditionFalse, ReasonRolledBack, d.Message)
}

func (r *Reconciler) forget(id string) {
	r.mu.Lock()
	delete(r.releasedAt, id)
	r.mu.Unlock()
}

// allReleased reports whether every child's binding is released: placed
// in a cluster by the dispatcher, or handed to Karmada's scheduler.
func (r *Reconciler) allReleased(ctx context.Context, children []batchv1alpha1.Job) (bool, error) {
	for _, c := range children {
		var rb workv1alpha2.ResourceBinding
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: c.Name + "-job"}, &rb)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if rb.Spec.SchedulingSuspended() && len(rb.Spec.Clusters) == 0 {
			return false, nil
		}
	}
	return true, nil
}
