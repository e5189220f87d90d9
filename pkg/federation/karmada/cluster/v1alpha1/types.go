// Package v1alpha1 mirrors Karmada's cluster.karmada.io/v1alpha1 Cluster:
// a member cluster joined to the Karmada control plane, with the resource
// summary the dispatcher reads capacity from.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.karmada.io
package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is a member cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterSpec `json:"spec"`
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// SyncMode is how the control plane reaches the cluster.
type SyncMode string

// Sync modes.
const (
	Push SyncMode = "Push"
	Pull SyncMode = "Pull"
)

// ClusterSpec is the part of Karmada's ClusterSpec Caldera reads.
type ClusterSpec struct {
	// SyncMode is Push or Pull.
	// +kubebuilder:validation:Enum=Push;Pull
	// +required
	SyncMode SyncMode `json:"syncMode"`
	// APIEndpoint is the member API server's address.
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`
	// SecretRef names the Secret with the credentials (token, caBundle)
	// to reach the member.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`
	// InsecureSkipTLSVerification skips verifying the member API server's
	// certificate.
	// +optional
	InsecureSkipTLSVerification bool `json:"insecureSkipTLSVerification,omitempty"`
	// ProxyURL is the proxy the member API server is reached through.
	// +optional
	ProxyURL string `json:"proxyURL,omitempty"`
	// +optional
	Provider string `json:"provider,omitempty"`
	// +optional
	Region string `json:"region,omitempty"`
	// +optional
	Zones []string `json:"zones,omitempty"`
	// Taints keep workloads off the cluster unless they tolerate them.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
}

// LocalSecretReference names a Secret.
type LocalSecretReference struct {
	// +required
	Namespace string `json:"namespace"`
	// +required
	Name string `json:"name"`
}

// ClusterConditionReady is the condition that says whether the cluster is
// healthy and reachable.
const ClusterConditionReady = "Ready"

// ClusterStatus is the part of Karmada's ClusterStatus Caldera reads.
type ClusterStatus struct {
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// APIEnablements are the kinds the member serves.
	// +optional
	APIEnablements []APIEnablement `json:"apiEnablements,omitempty"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	NodeSummary *NodeSummary `json:"nodeSummary,omitempty"`
	// +optional
	ResourceSummary *ResourceSummary `json:"resourceSummary,omitempty"`
}

// APIEnablement is a group version the member serves, with its kinds.
type APIEnablement struct {
	// +required
	GroupVersion string `json:"groupVersion"`
	// +optional
	Resources []APIResource `json:"resources,omitempty"`
}

// APIResource is a kind the member serves.
type APIResource struct {
	// Name is the plural name of the resource.
	// +required
	Name string `json:"name"`
	// +required
	Kind string `json:"kind"`
}

// NodeSummary counts the cluster's nodes.
type NodeSummary struct {
	// +optional
	TotalNum int32 `json:"totalNum,omitempty"`
	// +optional
	ReadyNum int32 `json:"readyNum,omitempty"`
}

// ResourceSummary sums the cluster's resources.
type ResourceSummary struct {
	// Allocatable is the sum of the nodes' allocatable resources.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Allocating is the requests of pods waiting to be scheduled.
	// +optional
	Allocating corev1.ResourceList `json:"allocating,omitempty"`
	// Allocated is the requests of pods scheduled to nodes.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
}

// ClusterList is a list of Clusters.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}
