// Package controller is caldera-global's DataSourceClaim controller on the
// Karmada API server: it binds each claim to the DataSource of its data,
// asking the providers of package datadep when no DataSource answers yet,
// and, with Reclaimer, deletes DataSources no claim has held for their
// ttlSecondsAfterUnbound.
package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/datadep"
)

// ControllerName names the claim controller.
const ControllerName = "datasourceclaim"

// Finalizer keeps a deleted claim until its DataSource no longer lists it.
const Finalizer = "datadependency.caldera.sh/claim"

// Reconciler resolves DataSourceClaims on the Karmada API server. A claim
// is bound to the DataSource of its data: one that has the locality (an
// administrator's, or a cached answer that has not expired), else one made
// from the provider's answer. A claim no provider knows is Pending with
// reason Unresolvable; one whose provider fails, Pending with reason
// ProviderError, asked again after Retry. The dispatcher reads the bound
// claim's clusters (pkg/datadep.ConstraintOf).
type Reconciler struct {
	Client   client.Client
	Registry *datadep.Registry
	Recorder record.EventRecorder
	Clock    clock.Clock
	// Retry is how soon a failed provider is asked again (10 s when 0).
	Retry time.Duration
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Retry <= 0 {
		r.Retry = 10 * time.Second
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&ddv1alpha1.DataSourceClaim{}).
		Watches(&ddv1alpha1.DataSource{}, handler.EnqueueRequestsFromMapFunc(r.claimsOf)).
		Complete(r)
}

// claimsOf lists the unbound claims a DataSource may resolve, and those
// bound to it.
func (r *Reconciler) claimsOf(ctx context.Context, obj client.Object) []reconcile.Request {
	ds := obj.(*ddv1alpha1.DataSource)
	var l ddv1alpha1.DataSourceClaimList
	if err := r.Client.List(ctx, &l); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range l.Items {
		c := &l.Items[i]
		if c.Status.BoundDataSource == ds.Name || c.Status.Phase != ddv1alpha1.DataSourceClaimBound && datadep.Matches(ds, datadep.QueryOf(c)) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(c)})
		}
	}
	return out
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &ddv1alpha1.DataSourceClaim{}
	if err := r.Client.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if claim.DeletionTimestamp != nil {
		return reconcile.Result{}, r.release(ctx, claim)
	}
	if !controllerutil.ContainsFinalizer(claim, Finalizer) {
		controllerutil.AddFinalizer(claim, Finalizer)
		if err := r.Client.Update(ctx, claim); err != nil {
			return reconcile.Result{}, err
		}
	}
	now := r.Clock.Now()
	q := datadep.QueryOf(claim)
	ds, err := r.usable(ctx, q, now)
	if err != nil {
		return reconcile.Result{}, err
	}
	if ds == nil {
		answer, provider, err := r.Registry.Resolve(ctx, q)
		switch {
		case errors.Is(err, datadep.ErrUnknown):
			return reconcile.Result{}, r.pending(ctx, claim, ddv1alpha1.ReasonUnresolvable, err.Error())
		case err != nil:
			return reconcile.Result{RequeueAfter: r.Retry}, r.pending(ctx, claim, ddv1alpha1.ReasonProviderError, err.Error())
		}
		if ds, err = r.cache(ctx, q, answer, provider, now); err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := r.bind(ctx, claim, ds); err != nil {
		return reconcile.Result{}, err
	}
	if exp := ds.Status.ExpiresAt; exp != nil {
		// Asked again once the answer stops holding.
		return reconcile.Result{RequeueAfter: max(exp.Sub(now), time.Second)}, nil
	}
	return reconcile.Result{}, nil
}

// usable is the DataSource of the query whose locality holds now, if any:
// an administrator's before a cached one.
func (r *Reconciler) usable(ctx context.Context, q datadep.Query, now time.Time) (*ddv1alpha1.DataSource, error) {
	var l ddv1alpha1.DataSourceList
	if err := r.Client.List(ctx, &l); err != nil {
		return nil, fmt.Errorf("listing DataSources: %w", err)
	}
	var found []*ddv1alpha1.DataSource
	for i := range l.Items {
		ds := &l.Items[i]
		if !datadep.Matches(ds, q) || ds.DeletionTimestamp != nil || ds.Spec.Locality == nil || len(ds.Spec.Locality.ClusterNames) == 0 {
			continue
		}
		if exp := ds.Status.ExpiresAt; exp != nil && !now.Before(exp.Time) {
			continue
		}
		found = append(found, ds)
	}
	slices.SortFunc(found, func(a, b *ddv1alpha1.DataSource) int {
		if (a.Status.ResolvedBy == "") != (b.Status.ResolvedBy == "") {
			if a.Status.ResolvedBy == "" {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(found) == 0 {
		return nil, nil
	}
	return found[0], nil
}

// CacheName is the name of the DataSource caching a provider's answer to
// the query.
func CacheName(q datadep.Query) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", q.System, q.Type, q.Name)
	for _, k := range sortedKeys(q.Attributes) {
		fmt.Fprintf(h, "\x00%s=%s", k, q.Attributes[k])
	}
	return strings.ToLower(q.System) + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// cache writes the provider's answer as a DataSource.
func (r *Reconciler) cache(ctx context.Context, q datadep.Query, a datadep.Answer, provider string, now time.Time) (*ddv1alpha1.DataSource, error) {
	ds := &ddv1alpha1.DataSource{ObjectMeta: metav1.ObjectMeta{Name: CacheName(q)}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, ds, func() error {
		ds.Spec.System, ds.Spec.Type, ds.Spec.Name, ds.Spec.Attributes = q.System, q.Type, q.Name, q.Attributes
		ds.Spec.Locality = &ddv1alpha1.DataSourceLocality{ClusterNames: a.ClusterNames}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("caching the location of %s: %w", q, err)
	}
	patched := ds.DeepCopy()
	patched.Status.ResolvedBy = provider
	patched.Status.ExpiresAt = nil
	if a.TTL > 0 {
		patched.Status.ExpiresAt = &metav1.Time{Time: now.Add(a.TTL)}
	}
	meta.SetStatusCondition(&patched.Status.Conditions, metav1.Condition{Type: ddv1alpha1.DataSourceAvailable, Status: metav1.ConditionTrue,
		Reason: "Resolved", Message: fmt.Sprintf("%s answered %s", provider, strings.Join(a.ClusterNames, ", ")), ObservedGeneration: ds.Generation})
	if err := r.Client.Status().Patch(ctx, patched, client.MergeFrom(ds)); err != nil {
		return nil, fmt.Errorf("recording the answer for %s: %w", q, err)
	}
	return patched, nil
}

// bind records the claim on the DataSource and the DataSource on the claim.
func (r *Reconciler) bind(ctx context.Context, claim *ddv1alpha1.DataSourceClaim, ds *ddv1alpha1.DataSource) error {
	ref := corev1.ObjectReference{APIVersion: ddv1alpha1.SchemeGroupVersion.String(), Kind: "DataSourceClaim", Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
	if !slices.ContainsFunc(ds.Status.ClaimRefs, func(o corev1.ObjectReference) bool { return o.UID == claim.UID }) {
		patched := ds.DeepCopy()
		patched.Status.ClaimRefs = append(patched.Status.ClaimRefs, ref)
		patched.Status.BoundClaims = int32(len(patched.Status.ClaimRefs))
		patched.Status.UnboundTime = nil
		if err := r.Client.Status().Patch(ctx, patched, client.MergeFromWithOptions(ds, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("recording claim %s/%s on DataSource %s: %w", claim.Namespace, claim.Name, ds.Name, err)
		}
	}
	clusters := append([]string(nil), ds.Spec.Locality.ClusterNames...)
	slices.Sort(clusters)
	patched := claim.DeepCopy()
	patched.Status.Phase = ddv1alpha1.DataSourceClaimBound
	patched.Status.BoundDataSource = ds.Name
	patched.Status.ResolvedClusterNames = clusters
	patched.Status.ObservedGeneration = claim.Generation
	msg := fmt.Sprintf("bound to DataSource %s: the data is in %s", ds.Name, strings.Join(clusters, ", "))
	if claim.Status.Phase != ddv1alpha1.DataSourceClaimBound || claim.Status.BoundDataSource != ds.Name || !slices.Equal(claim.Status.ResolvedClusterNames, clusters) {
		r.Recorder.Event(claim, corev1.EventTypeNormal, ddv1alpha1.ReasonBound, msg)
	}
	meta.SetStatusCondition(&patched.Status.Conditions, metav1.Condition{Type: ddv1alpha1.DataSourceClaimReady, Status: metav1.ConditionTrue,
		Reason: ddv1alpha1.ReasonBound, Message: msg, ObservedGeneration: claim.Generation, LastTransitionTime: metav1.NewTime(r.Clock.Now())})
	return r.writeStatus(ctx, claim, patched)
}

// pending records why the claim is not bound.
func (r *Reconciler) pending(ctx context.Context, claim *ddv1alpha1.DataSourceClaim, reason, msg string) error {
	patched := claim.DeepCopy()
	patched.Status.Phase = ddv1alpha1.DataSourceClaimPending
	patched.Status.ObservedGeneration = claim.Generation
	if old := meta.FindStatusCondition(claim.Status.Conditions, ddv1alpha1.DataSourceClaimReady); old == nil || old.Reason != reason || old.Message != msg {
		r.Recorder.Event(claim, corev1.EventTypeWarning, reason, msg)
	}
	meta.SetStatusCondition(&patched.Status.Conditions, metav1.Condition{Type: ddv1alpha1.DataSourceClaimReady, Status: metav1.ConditionFalse,
		Reason: reason, Message: msg, ObservedGeneration: claim.Generation, LastTransitionTime: metav1.NewTime(r.Clock.Now())})
	return r.writeStatus(ctx, claim, patched)
}

func (r *Reconciler) writeStatus(ctx context.Context, old, patched *ddv1alpha1.DataSourceClaim) error {
	if equality.Semantic.DeepEqual(old.Status, patched.Status) {
		return nil
	}
	return r.Client.Status().Patch(ctx, patched, client.MergeFrom(old))
}

// release takes a deleted claim off its DataSource, then lets it go.
func (r *Reconciler) release(ctx context.Context, claim *ddv1alpha1.DataSourceClaim) error {
	if !controllerutil.ContainsFinalizer(claim, Finalizer) {
		return nil
	}
	if name := claim.Status.BoundDataSource; name != "" {
		ds := &ddv1alpha1.DataSource{}
		err := r.Client.Get(ctx, client.ObjectKey{Name: name}, ds)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return err
		default:
			kept := slices.DeleteFunc(slices.Clone(ds.Status.ClaimRefs), func(o corev1.ObjectReference) bool { return o.UID == claim.UID })
			if len(kept) != len(ds.Status.ClaimRefs) {
				patched := ds.DeepCopy()
				patched.Status.ClaimRefs, patched.Status.BoundClaims = kept, int32(len(kept))
				if len(kept) == 0 {
					patched.Status.UnboundTime = &metav1.Time{Time: r.Clock.Now()}
				}
				if err := r.Client.Status().Patch(ctx, patched, client.MergeFromWithOptions(ds, client.MergeFromWithOptimisticLock{})); err != nil {
					return err
				}
			}
		}
	}
	controllerutil.RemoveFinalizer(claim, Finalizer)
	return r.Client.Update(ctx, claim)
}

// ReclaimerName names the DataSource reclaimer.
const ReclaimerName = "datasource-reclaim"

// Reclaimer deletes DataSources with reclaimPolicy Delete once no claim
// has been bound to them for ttlSecondsAfterUnbound (at once without it).
// A DataSource a claim binds meanwhile is kept: the deletion is made on
// the version the reclaimer saw unbound.
type Reclaimer struct {
	Client client.Client
	Clock  clock.Clock
}

// SetupWithManager registers the reclaimer.
func (r *Reclaimer) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).Named(ReclaimerName).For(&ddv1alpha1.DataSource{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Reclaimer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ds := &ddv1alpha1.DataSource{}
	if err := r.Client.Get(ctx, req.NamespacedName, ds); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if ds.Spec.ReclaimPolicy != ddv1alpha1.ReclaimPolicyDelete || ds.DeletionTimestamp != nil || len(ds.Status.ClaimRefs) > 0 || ds.Status.UnboundTime == nil {
		return reconcile.Result{}, nil
	}
	var ttl time.Duration
	if ds.Spec.TTLSecondsAfterUnbound != nil {
		ttl = time.Duration(*ds.Spec.TTLSecondsAfterUnbound) * time.Second
	}
	if left := ttl - r.Clock.Since(ds.Status.UnboundTime.Time); left > 0 {
		return reconcile.Result{RequeueAfter: left}, nil
	}
	err := r.Client.Delete(ctx, ds, client.Preconditions{ResourceVersion: &ds.ResourceVersion})
	if apierrors.IsConflict(err) {
		// Changed since: looked at again with its new version.
		return reconcile.Result{Requeue: true}, nil
	}
	return reconcile.Result{}, client.IgnoreNotFound(err)
}
