// Package jobflow admits flow.volcano.sh/v1alpha1 JobFlows and JobTemplates.
// A JobFlow is refused when its flows' names, dependencies (a missing
// target, a cycle), probes (ports, paths) or patches are wrong
// (apis/flow/v1alpha1/validation). A JobTemplate is refused when its spec
// would be refused as a Job's (tasks, policies, task templates, plugins).
package jobflow

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	batchvalidation "github.com/caldera-sh/caldera/apis/batch/v1alpha1/validation"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	flowvalidation "github.com/caldera-sh/caldera/apis/flow/v1alpha1/validation"
	jobcore "github.com/caldera-sh/caldera/pkg/controllers/job/core"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
	"github.com/caldera-sh/caldera/pkg/webhooks/job"
)

// Flows defaults (the retain policy: retain) and validates JobFlows.
var Flows = admit.Stateless[*flowv1alpha1.JobFlow]{
	Kind: flowv1alpha1.SchemeGroupVersion.WithKind("JobFlow").GroupKind(),
	SetDefaults: func(jf *flowv1alpha1.JobFlow) {
		if jf.Spec.JobRetainPolicy == "" {
			jf.Spec.JobRetainPolicy = flowv1alpha1.Retain
		}
	},
	Check: flowvalidation.ValidateJobFlow,
}

// Templates applies the Job defaults to a JobTemplate's spec and refuses a
// template whose spec would be refused as a Job's; every field may change.
var Templates = admit.Stateless[*flowv1alpha1.JobTemplate]{
	Kind: flowv1alpha1.SchemeGroupVersion.WithKind("JobTemplate").GroupKind(),
	SetDefaults: func(t *flowv1alpha1.JobTemplate) {
		j := &batchv1alpha1.Job{Spec: t.Spec}
		batchv1alpha1.SetDefaults_Job(j)
		t.Spec = j.Spec
	},
	Check: func(t *flowv1alpha1.JobTemplate) field.ErrorList {
		j := &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name}, Spec: *t.Spec.DeepCopy()}
		batchv1alpha1.SetDefaults_Job(j)
		errs := batchvalidation.ValidateJob(j)
		errs = append(errs, jobcore.ValidatePlugins(j, field.NewPath("spec", "plugins"))...)
		return append(errs, job.ValidateTemplates(&j.Spec, field.NewPath("spec"))...)
	},
}
