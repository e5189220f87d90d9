// Package v1alpha1 holds the flow.volcano.sh/v1alpha1 API: JobTemplate, a
// Volcano Job spec kept for reuse, and JobFlow, which runs Jobs from
// templates in the order their dependencies give.
//
// +kubebuilder:object:generate=true
// +groupName=flow.volcano.sh
package v1alpha1
