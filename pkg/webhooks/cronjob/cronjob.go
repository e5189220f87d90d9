// Package cronjob admits batch.volcano.sh/v1alpha1 CronJobs: it fills in the
// defaults (and the Job defaults of the template) and refuses a CronJob
// whose schedule or time zone does not parse, whose numbers are negative,
// whose name leaves no room for its Jobs' names, or whose template the job
// webhook would refuse as a Job spec (its task templates, its plugins).
//
// The template's queue is not looked up: each run's Job is admitted by the
// job webhook when it is created, and a refusal is an event on the CronJob.
package cronjob

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	batchvalidation "github.com/caldera-sh/caldera/apis/batch/v1alpha1/validation"
	jobcore "github.com/caldera-sh/caldera/pkg/controllers/job/core"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
	"github.com/caldera-sh/caldera/pkg/webhooks/job"
)

// Webhook applies SetDefaults_CronJob, on create and update (it is
// idempotent), and checks a CronJob, new or changed, as a new one: every
// field may change, and the next run uses the new spec.
var Webhook = admit.Stateless[*batchv1alpha1.CronJob]{
	Kind:        batchv1alpha1.SchemeGroupVersion.WithKind("CronJob").GroupKind(),
	SetDefaults: batchv1alpha1.SetDefaults_CronJob,
	Check:       validate,
}

func validate(cj *batchv1alpha1.CronJob) field.ErrorList {
	cj = cj.DeepCopy()
	batchv1alpha1.SetDefaults_CronJob(cj)
	errs := batchvalidation.ValidateCronJob(cj)
	specPath := field.NewPath("spec", "jobTemplate", "spec")
	run := &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: cj.Namespace, Name: cj.Name}, Spec: cj.Spec.JobTemplate.Spec}
	errs = append(errs, jobcore.ValidatePlugins(run, specPath.Child("plugins"))...)
	errs = append(errs, job.ValidateTemplates(&run.Spec, specPath)...)
	return errs
}
