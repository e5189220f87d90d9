// Package v1beta2 mirrors Cluster API's cluster.x-k8s.io/v1beta2 Cluster:
// a workload cluster a management cluster provisions, with the state the
// inventory reads to tell whether it can take work.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.x-k8s.io
package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is a workload cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ClusterSpec `json:"spec,omitempty"`
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterSpec is the part of Cluster API's ClusterSpec Caldera reads.
type ClusterSpec struct {
	// Paused stops Cluster API reconciling the cluster; the cluster still
	// runs work.
	// +optional
	Paused *bool `json:"paused,omitempty"`
	// ControlPlaneEndpoint is where the cluster's API server listens.
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty"`
}

// APIEndpoint is a host and port.
type APIEndpoint struct {
	// +optional
	Host string `json:"host,omitempty"`
	// +optional
	Port int32 `json:"port,omitempty"`
}

// ClusterPhase is the cluster's phase.
type ClusterPhase string

// Phases.
const (
	ClusterPhasePending      ClusterPhase = "Pending"
	ClusterPhaseProvisioning ClusterPhase = "Provisioning"
	ClusterPhaseProvisioned  ClusterPhase = "Provisioned"
	ClusterPhaseDeleting     ClusterPhase = "Deleting"
	ClusterPhaseFailed       ClusterPhase = "Failed"
	ClusterPhaseUnknown      ClusterPhase = "Unknown"
)

// ClusterAvailableCondition is the condition that says whether the
// cluster is available.
const ClusterAvailableCondition = "Available"

// ClusterStatus is the part of Cluster API's ClusterStatus Caldera reads.
type ClusterStatus struct {
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Initialization ClusterInitializationStatus `json:"initialization,omitempty"`
	// +optional
	Phase ClusterPhase `json:"phase,omitempty"`
}

// ClusterInitializationStatus is how far the cluster's provisioning went.
type ClusterInitializationStatus struct {
	// +optional
	InfrastructureProvisioned *bool `json:"infrastructureProvisioned,omitempty"`
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// ClusterList is a list of Clusters.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}
