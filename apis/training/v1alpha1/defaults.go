package v1alpha1

import (
	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// SetDefaults_HyperJob fills in what a HyperJob omits: one replica per
// replicated job, the static split mode, and in every template the defaults a
// Volcano Job gets on admission, so that the stored template is what the
// child jobs run. It reads nothing but the HyperJob and is idempotent.
func SetDefaults_HyperJob(hj *HyperJob) {
	for i := range hj.Spec.ReplicatedJobs {
		rj := &hj.Spec.ReplicatedJobs[i]
		if rj.Replicas == 0 {
			rj.Replicas = 1
		}
		if rj.SplitPolicy != nil && rj.SplitPolicy.Mode == "" {
			rj.SplitPolicy.Mode = SplitModeStatic
		}
		template := batchv1alpha1.Job{Spec: rj.TemplateSpec}
		batchv1alpha1.SetDefaults_Job(&template)
		rj.TemplateSpec = template.Spec
	}
}
