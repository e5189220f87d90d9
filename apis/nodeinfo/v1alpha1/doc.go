// Package v1alpha1 holds the nodeinfo.volcano.sh/v1alpha1 API: Numatopology,
// one node's CPU topology (which NUMA node, socket and core each CPU is
// on), the CPUs its kubelet has not pinned, and its CPU and topology
// manager policies, as the node reports them. The scheduler's numa-aware
// plugin places pods with a NUMA topology policy only where the node's
// kubelet will admit them.
//
// +kubebuilder:object:generate=true
// +groupName=nodeinfo.volcano.sh
package v1alpha1
