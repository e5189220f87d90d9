package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Numatopology is what one node reports of its CPUs: where each sits
// (NUMA node, socket, core), which are free of pinned containers, how many
// the kubelet keeps for the system, and the kubelet's CPU and topology
// manager policies. It is named after its node. A node agent writes it;
// the scheduler reads it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=numatopologies,shortName=numatopo,scope=Cluster
// +kubebuilder:printcolumn:name="CPUManager",type=string,JSONPath=`.spec.policies.CPUManagerPolicy`
// +kubebuilder:printcolumn:name="TopologyManager",type=string,JSONPath=`.spec.policies.TopologyManagerPolicy`
// +kubebuilder:printcolumn:name="FreeCPUs",type=string,JSONPath=`.spec.numares.cpu.allocatable`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Numatopology struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the node's report.
	// +optional
	Spec NumatopoSpec `json:"spec,omitempty"`
}

// PolicyName names a kubelet policy a node reports.
type PolicyName string

const (
	// CPUManagerPolicy is the kubelet's --cpu-manager-policy: "static"
	// pins whole CPUs of Guaranteed containers, "none" pins nothing.
	CPUManagerPolicy PolicyName = "CPUManagerPolicy"
	// TopologyManagerPolicy is the kubelet's --topology-manager-policy:
	// none, best-effort, restricted or single-numa-node.
	TopologyManagerPolicy PolicyName = "TopologyManagerPolicy"
)

// NumatopoSpec is a node's CPU topology and what of it is free.
type NumatopoSpec struct {
	// Policies are the kubelet's CPU manager and topology manager
	// policies.
	// +optional
	// +kubebuilder:validation:MaxProperties=2
	// +kubebuilder:validation:XValidation:rule="self.all(k, k == 'CPUManagerPolicy' || k == 'TopologyManagerPolicy')",message="the policies are CPUManagerPolicy and TopologyManagerPolicy"
	Policies map[PolicyName]string `json:"policies,omitempty"`

	// ResReserved is what the kubelet keeps for the system, by resource
	// (for example cpu: "2"); reserved CPUs are never given to pods.
	// +optional
	ResReserved map[string]string `json:"resReserved,omitempty"`

	// NumaResMap is, per resource, what is free and what there is. For
	// cpu, allocatable is the list of CPUs no container has pinned (for
	// example "0-3,8-11") and capacity the node's CPU count.
	// +optional
	NumaResMap map[string]ResourceInfo `json:"numares,omitempty"`

	// CPUDetail is where each CPU sits, by CPU id ("0", "1", ...).
	// +optional
	CPUDetail map[string]CPUInfo `json:"cpuDetail,omitempty"`

	// PodAllocations are the CPUs each pod's containers hold on the node,
	// as the kubelet reports them.
	// +optional
	// +listType=atomic
	PodAllocations []PodAllocation `json:"podAllocations,omitempty"`
}

// ResourceInfo is what is free of a resource on a node and what there is.
type ResourceInfo struct {
	// Allocatable is what is free: for cpu, a CPU list ("0-3,8,10-11").
	// +optional
	// +kubebuilder:validation:Pattern=`^$|^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$`
	Allocatable string `json:"allocatable,omitempty"`
	// Capacity is how much there is: for cpu, the number of CPUs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Capacity int `json:"capacity,omitempty"`
}

// CPUInfo is where one CPU sits.
type CPUInfo struct {
	// NUMANodeID is the CPU's NUMA node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NUMANodeID int `json:"numa,omitempty"`
	// SocketID is the CPU's physical package.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SocketID int `json:"socket,omitempty"`
	// CoreID is the CPU's physical core; hyperthreads of one core share
	// it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	CoreID int `json:"core,omitempty"`
}

// PodAllocation is what one pod's containers hold on the node.
type PodAllocation struct {
	// UID is the pod's.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// Name and Namespace are the pod's.
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// ContainerAllocations are what each container holds.
	// +optional
	// +listType=atomic
	ContainerAllocations []ContainerAllocation `json:"containerAllocations,omitempty"`
}

// ContainerAllocation is what one container holds, by resource: for cpu,
// a CPU list.
type ContainerAllocation struct {
	// Name is the container's.
	// +required
	Name string `json:"name"`
	// Allocations are what it holds, by resource.
	// +optional
	Allocations map[string]string `json:"allocations,omitempty"`
}

// NumatopologyList is a list of Numatopology.
//
// +kubebuilder:object:root=true
type NumatopologyList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Numatopology `json:"items"`
}
