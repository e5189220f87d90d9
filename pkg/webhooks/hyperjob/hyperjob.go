// Package hyperjob admits training.volcano.sh/v1alpha1 HyperJobs: it fills in
// the HyperJob defaults (which default every job template as a Job) and
// refuses a HyperJob whose child jobs the member clusters would refuse:
// invalid specs (apis/training/v1alpha1/validation), pod templates that
// could not become pods, and unknown job plugins.
//
// The templates' queues are not looked up: they name queues of the member
// clusters, which the cluster running this webhook may not have.
package hyperjob

import (
	"context"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	trainingvalidation "github.com/caldera-sh/caldera/apis/training/v1alpha1/validation"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
	"github.com/caldera-sh/caldera/pkg/webhooks/job"
)

var groupKind = trainingv1alpha1.SchemeGroupVersion.WithKind("HyperJob").GroupKind()

// Webhook defaults and validates HyperJobs.
type Webhook struct {
	plugins sets.Set[string]
}

var (
	_ admission.Defaulter[*trainingv1alpha1.HyperJob] = &Webhook{}
	_ admission.Validator[*trainingv1alpha1.HyperJob] = &Webhook{}
)

// NewWebhook returns the HyperJob webhook; plugins are the job plugins the
// member clusters' job controllers accept.
func NewWebhook(plugins []string) *Webhook {
	return &Webhook{plugins: sets.New(plugins...)}
}

// Default applies SetDefaults_HyperJob, on create and update alike (it is
// idempotent).
func (w *Webhook) Default(_ context.Context, hj *trainingv1alpha1.HyperJob) error {
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	return nil
}

// ValidateCreate checks a new HyperJob.
func (w *Webhook) ValidateCreate(_ context.Context, hj *trainingv1alpha1.HyperJob) (admission.Warnings, error) {
	return nil, admit.Invalid(groupKind, hj.Name, w.validate(hj))
}

// ValidateUpdate checks a changed HyperJob as a new one.
func (w *Webhook) ValidateUpdate(_ context.Context, _, hj *trainingv1alpha1.HyperJob) (admission.Warnings, error) {
	return nil, admit.Invalid(groupKind, hj.Name, w.validate(hj))
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *trainingv1alpha1.HyperJob) (admission.Warnings, error) {
	return nil, nil
}

func (w *Webhook) validate(hj *trainingv1alpha1.HyperJob) field.ErrorList {
	hj = hj.DeepCopy()
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	errs := trainingvalidation.ValidateHyperJob(hj)
	for i := range hj.Spec.ReplicatedJobs {
		templatePath := field.NewPath("spec", "replicatedJobs").Index(i).Child("templateSpec")
		template := &hj.Spec.ReplicatedJobs[i].TemplateSpec
		errs = append(errs, job.ValidatePlugins(template.Plugins, w.plugins, templatePath.Child("plugins"))...)
		errs = append(errs, job.ValidateTemplates(template, templatePath)...)
	}
	return errs
}
