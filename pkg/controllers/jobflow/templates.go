package jobflow

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controllers/jobflow/core"
)

// templateStatus keeps each JobTemplate's status.jobDependsOnList: the
// Jobs that exist made from it, sorted.
type templateStatus struct{ client client.Client }

func (r *templateStatus) setup(mgr manager.Manager) error {
	return ctrl.ControllerManagedBy(mgr).
		Named(Name+"-templates").
		For(&flowv1alpha1.JobTemplate{}).
		Watches(&batchv1alpha1.Job{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			t := o.GetAnnotations()[core.TemplateAnnotation]
			if t == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: t}}}
		})).
		Complete(r)
}

func (r *templateStatus) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var t flowv1alpha1.JobTemplate
	if err := r.client.Get(ctx, req.NamespacedName, &t); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var jobs batchv1alpha1.JobList
	if err := r.client.List(ctx, &jobs, client.InNamespace(t.Namespace), client.HasLabels{core.FlowLabel}); err != nil {
		return reconcile.Result{}, err
	}
	var made []string
	for _, j := range jobs.Items {
		if j.Annotations[core.TemplateAnnotation] == t.Name && j.DeletionTimestamp == nil {
			made = append(made, j.Name)
		}
	}
	slices.Sort(made)
	if slices.Equal(made, t.Status.JobDependsOnList) {
		return reconcile.Result{}, nil
	}
	t.Status.JobDependsOnList = made
	// A conflict requeues with the newer template.
	return reconcile.Result{}, r.client.Status().Update(ctx, &t)
}
