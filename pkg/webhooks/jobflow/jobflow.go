// Package jobflow admits flow.volcano.sh/v1alpha1 JobFlows and JobTemplates.
// A JobFlow is refused when its flows' names, dependencies (a missing
// target, a cycle), probes or patches are wrong (apis/flow/v1alpha1/
// validation), or when it asks for HTTP or TCP probes, which this version
// does not run. A JobTemplate is refused when its spec would be refused as
// a Job's (tasks, policies, task templates, plugins).
package jobflow

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	batchvalidation "github.com/caldera-sh/caldera/apis/batch/v1alpha1/validation"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	flowvalidation "github.com/caldera-sh/caldera/apis/flow/v1alpha1/validation"
	jobcore "github.com/caldera-sh/caldera/pkg/controllers/job/core"
	"github.com/caldera-sh/caldera/pkg/webhooks/job"
)

// Flows defaults and validates JobFlows.
type Flows struct{}

// Templates defaults and validates JobTemplates.
type Templates struct{}

var (
	_ admission.Defaulter[*flowv1alpha1.JobFlow]     = Flows{}
	_ admission.Validator[*flowv1alpha1.JobFlow]     = Flows{}
	_ admission.Defaulter[*flowv1alpha1.JobTemplate] = Templates{}
	_ admission.Validator[*flowv1alpha1.JobTemplate] = Templates{}
)

// Default sets the retain policy (retain).
func (Flows) Default(_ context.Context, jf *flowv1alpha1.JobFlow) error {
	if jf.Spec.JobRetainPolicy == "" {
		jf.Spec.JobRetainPolicy = flowv1alpha1.Retain
	}
	return nil
}

// ValidateCreate checks a new JobFlow.
func (Flows) ValidateCreate(_ context.Context, jf *flowv1alpha1.JobFlow) (admission.Warnings, error) {
	return nil, invalidFlow(jf)
}

// ValidateUpdate checks a changed JobFlow.
func (Flows) ValidateUpdate(_ context.Context, _, jf *flowv1alpha1.JobFlow) (admission.Warnings, error) {
	return nil, invalidFlow(jf)
}

// ValidateDelete allows every deletion.
func (Flows) ValidateDelete(context.Context, *flowv1alpha1.JobFlow) (admission.Warnings, error) {
	return nil, nil
}

func invalidFlow(jf *flowv1alpha1.JobFlow) error {
	errs := flowvalidation.ValidateJobFlow(jf)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(flowv1alpha1.SchemeGroupVersion.WithKind("JobFlow").GroupKind(), jf.Name, errs)
}

// Default applies the Job defaults to the template's spec.
func (Templates) Default(_ context.Context, t *flowv1alpha1.JobTemplate) error {
	j := &batchv1alpha1.Job{Spec: t.Spec}
	batchv1alpha1.SetDefaults_Job(j)
	t.Spec = j.Spec
	return nil
}

// ValidateCreate checks a new JobTemplate.
func (Templates) ValidateCreate(_ context.Context, t *flowv1alpha1.JobTemplate) (admission.Warnings, error) {
	return nil, invalidTemplate(t)
}

// ValidateUpdate checks a changed JobTemplate: every field may change.
func (Templates) ValidateUpdate(_ context.Context, _, t *flowv1alpha1.JobTemplate) (admission.Warnings, error) {
	return nil, invalidTemplate(t)
}

// ValidateDelete allows every deletion.
func (Templates) ValidateDelete(context.Context, *flowv1alpha1.JobTemplate) (admission.Warnings, error) {
	return nil, nil
}

func invalidTemplate(t *flowv1alpha1.JobTemplate) error {
	j := &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name}, Spec: *t.Spec.DeepCopy()}
	batchv1alpha1.SetDefaults_Job(j)
	errs := batchvalidation.ValidateJob(j)
	errs = append(errs, jobcore.ValidatePlugins(j, field.NewPath("spec", "plugins"))...)
	errs = append(errs, job.ValidateTemplates(&j.Spec, field.NewPath("spec"))...)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(flowv1alpha1.SchemeGroupVersion.WithKind("JobTemplate").GroupKind(), t.Name, errs)
}
