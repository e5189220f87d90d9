// Package jobflow runs flow.volcano.sh/v1alpha1 JobFlows: it creates each
// flow's Job from its JobTemplate once the flow's dependencies hold, as the
// decision in package core says, deletes the Jobs of a succeeded flow whose
// retain policy is delete, and keeps the JobFlow's status and each
// JobTemplate's list of the Jobs made from it.
package jobflow

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controllers/jobflow/core"
)

// Name is the controller's name in --controllers.
const Name = "jobflow"

// Reconciler runs JobFlows.
type Reconciler struct {
	client   client.Client
	recorder record.EventRecorder
	clock    clock.Clock
}

// NewReconciler returns the JobFlow controller.
func NewReconciler(c client.Client, recorder record.EventRecorder, clk clock.Clock) *Reconciler {
	return &Reconciler{client: c, recorder: recorder, clock: clk}
}

// SetupWithManager registers the controller and its watches: its JobFlows,
// their Jobs, and the JobTemplates they name (a flow waiting for its
// template starts when it is created). A second controller keeps each
// JobTemplate's list of the Jobs made from it.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := (&templateStatus{client: mgr.GetClient()}).setup(mgr); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&flowv1alpha1.JobFlow{}).
		Owns(&batchv1alpha1.Job{}).
		Watches(&flowv1alpha1.JobTemplate{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			var l flowv1alpha1.JobFlowList
			if err := mgr.GetClient().List(ctx, &l, client.InNamespace(o.GetNamespace())); err != nil {
				return nil
			}
			var out []reconcile.Request
			for _, jf := range l.Items {
				for _, f := range jf.Spec.Flows {
					if f.Name == o.GetName() {
						out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: jf.Namespace, Name: jf.Name}})
						break
					}
				}
			}
			return out
		})).
		Complete(r)
}

// Reconcile starts the flows whose dependencies hold and keeps the status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var jf flowv1alpha1.JobFlow
	if err := r.client.Get(ctx, req.NamespacedName, &jf); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var jobs batchv1alpha1.JobList
	if err := r.client.List(ctx, &jobs, client.InNamespace(jf.Namespace), client.MatchingLabels{core.FlowLabel: jf.Name}); err != nil {
		return reconcile.Result{}, err
	}
	owned := map[string]*batchv1alpha1.Job{}
	for i := range jobs.Items {
		if ref := metav1.GetControllerOf(&jobs.Items[i]); ref != nil && ref.UID == jf.UID {
			owned[jobs.Items[i].Name] = &jobs.Items[i]
		}
	}
	templates := map[string]*flowv1alpha1.JobTemplate{}
	for _, f := range jf.Spec.Flows {
		var t flowv1alpha1.JobTemplate
		err := r.client.Get(ctx, client.ObjectKey{Namespace: jf.Namespace, Name: f.Name}, &t)
		switch {
		case err == nil:
			templates[f.Name] = &t
		case !apierrors.IsNotFound(err):
			return reconcile.Result{}, err
		}
	}
	in := core.Input{Flow: &jf, Templates: templates, Jobs: owned, Now: r.clock.Now()}
	probes, err := r.runProbes(ctx, jf.Namespace, core.ProbesToRun(in))
	if err != nil {
		return reconcile.Result{}, err
	}
	in.Probes = probes
	d := core.Decide(in)
	for _, j := range d.Create {
		if err := r.client.Create(ctx, j); err != nil && !apierrors.IsAlreadyExists(err) {
			r.recorder.Eventf(&jf, "Warning", "FailedCreate", "creating job %s: %v", j.Name, err)
			return reconcile.Result{}, fmt.Errorf("creating job %s: %w", j.Name, err)
		}
	}
	for _, j := range d.Delete {
		err := r.client.Delete(ctx, j, client.Preconditions{UID: &j.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return reconcile.Result{}, fmt.Errorf("deleting job %s: %w", j.Name, err)
		}
	}
	for _, e := range d.Events {
		r.recorder.Event(&jf, e.Type, e.Reason, e.Message)
	}
	if !equality.Semantic.DeepEqual(jf.Status, d.Status) {
		was := jf.Status.State.Phase
		jf.Status = d.Status
		if err := r.client.Status().Update(ctx, &jf); err != nil {
			if apierrors.IsConflict(err) {
				return reconcile.Result{Requeue: true}, nil
			}
			return reconcile.Result{}, err
		}
		// Counted once the end is recorded, so that it is counted once.
		if now := d.Status.State.Phase; now != was && (now == flowv1alpha1.Succeed || now == flowv1alpha1.Failed) {
			finished.WithLabelValues(string(now)).Inc()
		}
	}
	return reconcile.Result{RequeueAfter: d.RequeueAfter}, nil
}
