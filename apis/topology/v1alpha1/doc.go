// Package v1alpha1 holds the topology.volcano.sh/v1alpha1 API: HyperNode, one
// network performance domain (a switch, a rack, a NVLink domain) whose members
// are nodes or other HyperNodes. HyperNodes form a tree; the lower the tier,
// the faster the network between the nodes below it.
//
// +kubebuilder:object:generate=true
// +groupName=topology.volcano.sh
package v1alpha1
