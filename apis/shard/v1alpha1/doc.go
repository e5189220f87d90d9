// Package v1alpha1 holds the shard.volcano.sh/v1alpha1 API: NodeShard, the
// pool of nodes one scheduler instance places pods on. A sharding
// controller (or a person) writes each shard's desired nodes; the
// scheduler instance that owns the shard reports the nodes it uses, so
// that a node moves between instances only once the one giving it up has
// stopped using it.
//
// +kubebuilder:object:generate=true
// +groupName=shard.volcano.sh
package v1alpha1
