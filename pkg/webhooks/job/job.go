// Package job admits batch.volcano.sh/v1alpha1 Jobs: it fills in Volcano's
// defaults and refuses a job whose spec is invalid (apis/batch/v1alpha1/
// validation), whose task templates could not become pods, whose plugins the
// job controller could not run (an unknown plugin or flag, a task a plugin
// needs that the job lacks), whose queue cannot take work, or whose
// PriorityClass does not exist.
package job

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	batchvalidation "github.com/caldera-sh/caldera/apis/batch/v1alpha1/validation"
	jobcore "github.com/caldera-sh/caldera/pkg/controllers/job/core"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
	"github.com/caldera-sh/caldera/pkg/webhooks/pod"
	"github.com/caldera-sh/caldera/pkg/webhooks/podtemplate"
	"github.com/caldera-sh/caldera/pkg/webhooks/priorityclass"
	"github.com/caldera-sh/caldera/pkg/webhooks/queueref"
)

var groupKind = batchv1alpha1.SchemeGroupVersion.WithKind("Job").GroupKind()

// Webhook defaults and validates Jobs.
type Webhook struct {
	reader lookup.Reader
}

var (
	_ admission.Defaulter[*batchv1alpha1.Job] = &Webhook{}
	_ admission.Validator[*batchv1alpha1.Job] = &Webhook{}
)

// NewWebhook returns the Job webhook.
func NewWebhook(reader lookup.Reader) *Webhook {
	return &Webhook{reader: reader}
}

// Default applies SetDefaults_Job. It runs on update too: defaulting is
// idempotent, and re-applying a manifest that omits defaulted fields (task
// names, minAvailable) then yields the stored job instead of a change that
// the update rules forbid.
//
// It refuses a job that names a value outside one of the CRD schema's
// enums (a policy's action or event, a topology policy, a dependsOn
// iteration, a network topology mode). The API server checks the schema
// after the mutating webhooks and before the validating ones, and an enum
// error makes it skip the schema's CEL rules and add a pathless line to
// the refusal ("<nil>: Invalid value: null: some validation rules were not
// checked ..."). Refused here, the job gets one field error per value.
func (w *Webhook) Default(_ context.Context, job *batchv1alpha1.Job) error {
	if errs := unsupportedValues(batchvalidation.ValidateJob(defaulted(job))); len(errs) > 0 {
		return admit.Invalid(groupKind, job.Name, errs)
	}
	batchv1alpha1.SetDefaults_Job(job)
	return nil
}

// unsupportedValues keeps the errors of values outside a set: those the
// schema's enums also find.
func unsupportedValues(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if e.Type == field.ErrorTypeNotSupported {
			out = append(out, e)
		}
	}
	return out
}

// ValidateCreate checks a new job.
func (w *Webhook) ValidateCreate(ctx context.Context, job *batchv1alpha1.Job) (admission.Warnings, error) {
	job = defaulted(job)
	specPath := field.NewPath("spec")
	errs := batchvalidation.ValidateJob(job)
	errs = append(errs, jobcore.ValidatePlugins(job, specPath.Child("plugins"))...)
	errs = append(errs, ValidateTemplates(&job.Spec, specPath)...)

	refErrs, err := w.reader.Confirmed(ctx, func(ctx context.Context, c client.Reader) (field.ErrorList, error) {
		errs, err := validateQueue(ctx, c, job.Spec.Queue, specPath.Child("queue"))
		if err != nil {
			return nil, err
		}
		pcErrs, err := priorityclass.Validate(ctx, c, job.Spec.PriorityClassName, specPath.Child("priorityClassName"))
		return append(errs, pcErrs...), err
	})
	if err != nil {
		return nil, admit.Internal("checking the job's queue and PriorityClass", err)
	}
	return nil, admit.Invalid(groupKind, job.Name, append(errs, refErrs...))
}

// ValidateUpdate checks a change of a job. The queue is not checked again
// (it cannot change, and a closed queue must not stop its jobs from being
// scaled); a changed PriorityClass must exist.
func (w *Webhook) ValidateUpdate(ctx context.Context, oldJob, newJob *batchv1alpha1.Job) (admission.Warnings, error) {
	oldJob, newJob = defaulted(oldJob), defaulted(newJob)
	errs := batchvalidation.ValidateJobUpdate(oldJob, newJob)
	if pc := newJob.Spec.PriorityClassName; pc != oldJob.Spec.PriorityClassName {
		pcErrs, err := w.reader.Confirmed(ctx, func(ctx context.Context, c client.Reader) (field.ErrorList, error) {
			return priorityclass.Validate(ctx, c, pc, field.NewPath("spec", "priorityClassName"))
		})
		if err != nil {
			return nil, admit.Internal("checking the job's PriorityClass", err)
		}
		errs = append(errs, pcErrs...)
	}
	return nil, admit.Invalid(groupKind, newJob.Name, errs)
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *batchv1alpha1.Job) (admission.Warnings, error) {
	return nil, nil
}

// defaulted returns a defaulted copy: the validation functions expect
// defaulted jobs, and a job may reach validation without the mutating
// webhook (for example when only the validating configuration is installed).
func defaulted(job *batchv1alpha1.Job) *batchv1alpha1.Job {
	job = job.DeepCopy()
	batchv1alpha1.SetDefaults_Job(job)
	return job
}

// ValidateTemplates checks the pod template of every task of a job spec.
func ValidateTemplates(spec *batchv1alpha1.JobSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range spec.Tasks {
		tp := specPath.Child("tasks").Index(i).Child("template")
		errs = append(errs, podtemplate.Validate(&spec.Tasks[i].Template, tp)...)
		errs = append(errs, pod.ValidateGPURequests(&spec.Tasks[i].Template.Spec, tp.Child("spec"))...)
	}
	return errs
}

func validateQueue(ctx context.Context, c client.Reader, name string, fldPath *field.Path) (field.ErrorList, error) {
	problem, err := queueref.Problem(ctx, c, name)
	if err != nil || problem == "" {
		return nil, err
	}
	return field.ErrorList{field.Invalid(fldPath, name, problem)}, nil
}
