// Package v1alpha1 holds the batch.volcano.sh/v1alpha1 API: Job (short names
// vcjob and vj), a gang of pod groups ("tasks") that is scheduled, retried and
// finished as one unit, with lifecycle policies that map pod and task events
// to job actions.
//
// The JSON shape follows Volcano's Job so that Volcano manifests apply
// unchanged. Defaulting that needs more than a static value lives in
// SetDefaults_Job; checks a CRD schema cannot express live in the validation
// subpackage.
//
// +kubebuilder:object:generate=true
// +groupName=batch.volcano.sh
package v1alpha1
