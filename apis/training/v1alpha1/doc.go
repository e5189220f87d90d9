// Package v1alpha1 holds the training.volcano.sh/v1alpha1 API: HyperJob, one
// training job split into several Volcano Jobs that run in different member
// clusters, possibly with different accelerators, and are tracked as one.
//
// +kubebuilder:object:generate=true
// +groupName=training.volcano.sh
package v1alpha1
