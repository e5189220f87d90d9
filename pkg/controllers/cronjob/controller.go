// Package cronjob runs batch.volcano.sh/v1alpha1 CronJobs: at each time of
// a CronJob's schedule it creates a Job from the template, as the decision
// in package core says, deletes what the concurrency policy and history
// limits say, and keeps the CronJob's status.
package cronjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controllers/cronjob/core"
)

// Name is the controller's name in --controllers.
const Name = "cronjob"

// jobOwnerIndex indexes Jobs by the UID of the CronJob that owns them.
const jobOwnerIndex = "caldera.cronjob.ownerUID"

// Reconciler runs CronJobs.
type Reconciler struct {
	client   client.Client
	recorder record.EventRecorder
	clock    clock.Clock
}

// NewReconciler returns the CronJob controller; clk is its time.
func NewReconciler(c client.Client, recorder record.EventRecorder, clk clock.Clock) *Reconciler {
	return &Reconciler{client: c, recorder: recorder, clock: clk}
}

// SetupWithManager registers the controller, its index and watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &batchv1alpha1.Job{}, jobOwnerIndex, func(o client.Object) []string {
		if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == "CronJob" && ref.APIVersion == batchv1alpha1.SchemeGroupVersion.String() {
			return []string{string(ref.UID)}
		}
		return nil
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&batchv1alpha1.CronJob{}).
		Owns(&batchv1alpha1.Job{}).
		Complete(r)
}

// Reconcile starts the run due, if any, and brings the CronJob's Jobs and
// status in line.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	logger := klog.FromContext(ctx)
	var cj batchv1alpha1.CronJob
	if err := r.client.Get(ctx, req.NamespacedName, &cj); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cj.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	var list batchv1alpha1.JobList
	if err := r.client.List(ctx, &list, client.InNamespace(cj.Namespace), client.MatchingFields{jobOwnerIndex: string(cj.UID)}); err != nil {
		return reconcile.Result{}, err
	}
	jobs := make([]*batchv1alpha1.Job, len(list.Items))
	for i := range list.Items {
		jobs[i] = &list.Items[i]
	}
	defaulted := cj.DeepCopy()
	batchv1alpha1.SetDefaults_CronJob(defaulted)
	d := core.Decide(core.Input{CronJob: defaulted, Jobs: jobs, Now: r.clock.Now()})

	for _, j := range d.Delete {
		err := r.client.Delete(ctx, j, client.Preconditions{UID: &j.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return reconcile.Result{}, fmt.Errorf("deleting job %s: %w", j.Name, err)
		}
	}
	if d.Create != nil {
		err := r.client.Create(ctx, d.Create)
		switch {
		case apierrors.IsAlreadyExists(err):
			// Created before a restart: the run is recorded below.
		case err != nil:
			r.recorder.Eventf(&cj, corev1.EventTypeWarning, "FailedCreate", "creating job %s: %v", d.Create.Name, err)
			return reconcile.Result{}, fmt.Errorf("creating job %s: %w", d.Create.Name, err)
		default:
			logger.V(2).Info("Created job", "cronjob", klog.KObj(&cj), "job", d.Create.Name)
		}
	}
	for _, e := range d.Events {
		r.recorder.Event(&cj, e.Type, e.Reason, e.Message)
	}
	if !equality.Semantic.DeepEqual(cj.Status, d.Status) {
		cj.Status = d.Status
		if err := r.client.Status().Update(ctx, &cj); err != nil {
			if apierrors.IsConflict(err) {
				// The CronJob changed; its event brings it back. A Job
				// created above is found by name then.
				return reconcile.Result{Requeue: true}, nil
			}
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: d.RequeueAfter}, nil
}
