package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// NodeUsage is what one node and its pods really use: the averages of the
// node agent's readings over a window that ended at Timestamp. It is named
// after its node and owned by it. The shape is that of metrics.k8s.io's
// NodeMetrics, with the pods' usage beside the node's.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodeusages,shortName=nu,scope=Cluster
// +kubebuilder:printcolumn:name="CPU",type=string,JSONPath=`.usage.cpu`
// +kubebuilder:printcolumn:name="Memory",type=string,JSONPath=`.usage.memory`
// +kubebuilder:printcolumn:name="Window",type=string,JSONPath=`.window`
// +kubebuilder:printcolumn:name="Measured",type=date,JSONPath=`.timestamp`
type NodeUsage struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Timestamp is when the window of readings ended. Readers judge the
	// usage's age by it and do not trust usage older than their bound.
	Timestamp metav1.Time `json:"timestamp"`

	// Window is the span the averages cover, ending at Timestamp. It is
	// shorter than the agent's configured window while the agent has not
	// read that long (after it starts).
	Window metav1.Duration `json:"window"`

	// Usage is the node's average use over the window: cpu (in CPUs) and
	// memory (bytes in use, not counting reclaimable cache).
	// +optional
	Usage corev1.ResourceList `json:"usage,omitempty"`

	// Pods is each pod's average use over the part of the window it ran
	// in; pods the agent has not read twice are absent.
	// +optional
	// +listType=atomic
	Pods []PodUsage `json:"pods,omitempty"`
}

// PodUsage is one pod's average use.
type PodUsage struct {
	// Namespace and Name name the pod.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// UID is the pod's UID: a pod recreated under the same name is another
	// pod.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// Usage is the pod's average cpu and memory.
	// +optional
	Usage corev1.ResourceList `json:"usage,omitempty"`
}

// NodeUsageList is a list of NodeUsage.
//
// +kubebuilder:object:root=true
type NodeUsageList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeUsage `json:"items"`
}
