// Package v1beta1 holds the scheduling.volcano.sh/v1beta1 API: PodGroup, the
// unit of gang scheduling, and Queue, the cluster-scoped share of resources
// PodGroups are admitted from. The wire format matches Volcano's so manifests
// written for Volcano apply unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=scheduling.volcano.sh
package v1beta1
