// Package webhook admits training.volcano.sh/v1alpha1 HyperJobs: it fills in
// the HyperJob defaults (which default every job template as a Job) and
// refuses a HyperJob whose child jobs the member clusters would refuse:
// invalid specs (apis/training/v1alpha1/validation), pod templates that
// could not become pods, and job plugins the job controller could not run.
//
// The templates' queues are not looked up: they name queues of the member
// clusters, which the cluster running this webhook may not have.
//
// On the Karmada API server (caldera-global), the webhook knows the member
// clusters too: it refuses cluster names that are no member's, and a
// maxDomains the HyperJob cannot be split within even with every member
// empty; a HyperJob that does not fit the federation even then is
// admitted with a warning (members may join).
package webhook

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	trainingvalidation "github.com/caldera-sh/caldera/apis/training/v1alpha1/validation"
	jobcore "github.com/caldera-sh/caldera/pkg/controllers/job/core"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
	"github.com/caldera-sh/caldera/pkg/webhooks/job"
)

var groupKind = trainingv1alpha1.SchemeGroupVersion.WithKind("HyperJob").GroupKind()

// Webhook defaults and validates HyperJobs.
type Webhook struct {
	// Federation, when set (on the Karmada API server), checks a HyperJob
	// that is valid in itself against the federation's member clusters:
	// errors refuse it, warnings go back to the user.
	Federation func(ctx context.Context, hj *trainingv1alpha1.HyperJob) (field.ErrorList, []string, error)
}

var (
	_ admission.Defaulter[*trainingv1alpha1.HyperJob] = &Webhook{}
	_ admission.Validator[*trainingv1alpha1.HyperJob] = &Webhook{}
)

// New returns the HyperJob webhook.
func New() *Webhook {
	return &Webhook{}
}

// Default applies SetDefaults_HyperJob, on create and update alike (it is
// idempotent), except to replicas: the API server's schema has already
// defaulted an absent one to 1, so a 0 here was written by the user, and
// validation refuses it.
func (w *Webhook) Default(_ context.Context, hj *trainingv1alpha1.HyperJob) error {
	var zero []int
	for i, rj := range hj.Spec.ReplicatedJobs {
		if rj.Replicas == 0 {
			zero = append(zero, i)
		}
	}
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	for _, i := range zero {
		hj.Spec.ReplicatedJobs[i].Replicas = 0
	}
	return nil
}

// ValidateCreate checks a new HyperJob.
func (w *Webhook) ValidateCreate(ctx context.Context, hj *trainingv1alpha1.HyperJob) (admission.Warnings, error) {
	return w.check(ctx, hj)
}

// ValidateUpdate checks a changed HyperJob as a new one.
func (w *Webhook) ValidateUpdate(ctx context.Context, _, hj *trainingv1alpha1.HyperJob) (admission.Warnings, error) {
	return w.check(ctx, hj)
}

func (w *Webhook) check(ctx context.Context, hj *trainingv1alpha1.HyperJob) (admission.Warnings, error) {
	errs := w.validate(hj)
	var warnings admission.Warnings
	if len(errs) == 0 && w.Federation != nil {
		more, warned, err := w.Federation(ctx, hj)
		if err != nil {
			return nil, err
		}
		errs, warnings = append(errs, more...), warned
	}
	return warnings, admit.Invalid(groupKind, hj.Name, errs)
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *trainingv1alpha1.HyperJob) (admission.Warnings, error) {
	return nil, nil
}

func (w *Webhook) validate(hj *trainingv1alpha1.HyperJob) field.ErrorList {
	var errs field.ErrorList
	for i, rj := range hj.Spec.ReplicatedJobs {
		if rj.Replicas < 1 {
			errs = append(errs, field.Invalid(field.NewPath("spec", "replicatedJobs").Index(i).Child("replicas"), rj.Replicas,
				"must be at least 1: a replicated job makes at least one child job"))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	hj = hj.DeepCopy()
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	errs = trainingvalidation.ValidateHyperJob(hj)
	for i := range hj.Spec.ReplicatedJobs {
		templatePath := field.NewPath("spec", "replicatedJobs").Index(i).Child("templateSpec")
		template := &hj.Spec.ReplicatedJobs[i].TemplateSpec
		child := &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: hj.Namespace, Name: hj.Name}, Spec: *template}
		errs = append(errs, jobcore.ValidatePlugins(child, templatePath.Child("plugins"))...)
		errs = append(errs, job.ValidateTemplates(template, templatePath)...)
	}
	return errs
}
