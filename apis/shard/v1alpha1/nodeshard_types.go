package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeShard is the pool of nodes of one scheduler instance, named as the
// instance's --scheduler-sharding-name (by default its scheduler name).
// spec.nodesDesired is what the instance should use; status is what it
// uses, written by the instance alone: a desired node that another
// instance still uses waits in nodesToAdd, and a node the instance still
// uses but no longer desires waits in nodesToRemove until its pending
// binds are done.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=nodeshards,shortName=nshard,scope=Cluster
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.desired`
// +kubebuilder:printcolumn:name="InUse",type=integer,JSONPath=`.status.inUse`
// +kubebuilder:printcolumn:name="ToAdd",type=integer,JSONPath=`.status.toAdd`
// +kubebuilder:printcolumn:name="ToRemove",type=integer,JSONPath=`.status.toRemove`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NodeShard struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the nodes the shard should have.
	Spec NodeShardSpec `json:"spec"`

	// Status is what the shard's scheduler instance uses.
	// +optional
	Status NodeShardStatus `json:"status,omitempty"`
}

// NodeShardSpec is the nodes a shard should have.
type NodeShardSpec struct {
	// NodesDesired are the names of the nodes the shard's scheduler should
	// place pods on. A node should be in at most one shard; a node two
	// shards desire goes to the one that uses it first.
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=253
	NodesDesired []string `json:"nodesDesired"`
}

// NodeShardStatus is what the shard's scheduler instance uses and what
// waits to move.
type NodeShardStatus struct {
	// LastUpdateTime is when the instance last wrote the status.
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// NodesInUse are the nodes the instance places pods on now.
	// +optional
	// +listType=set
	NodesInUse []string `json:"nodesInUse,omitempty"`
	// NodesToAdd are desired nodes another instance still uses; they join
	// nodesInUse once it has released them.
	// +optional
	// +listType=set
	NodesToAdd []string `json:"nodesToAdd,omitempty"`
	// NodesToRemove are nodes in use that are no longer desired; the
	// instance places nothing more on them and releases them once the
	// binds it started there are done.
	// +optional
	// +listType=set
	NodesToRemove []string `json:"nodesToRemove,omitempty"`

	// Desired, InUse, ToAdd and ToRemove count the lists above, for
	// `kubectl get nodeshards`.
	// +optional
	Desired int32 `json:"desired,omitempty"`
	// +optional
	InUse int32 `json:"inUse,omitempty"`
	// +optional
	ToAdd int32 `json:"toAdd,omitempty"`
	// +optional
	ToRemove int32 `json:"toRemove,omitempty"`

	// ObservedGeneration is the spec generation the status was computed
	// from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// NodeShardList is a list of NodeShards.
//
// +kubebuilder:object:root=true
type NodeShardList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeShard `json:"items"`
}

// Stamp is the status's lastUpdateTime as text ("" when unset), which
// changes with every renewal.
func (s *NodeShardStatus) Stamp() string {
	if s.LastUpdateTime == nil {
		return ""
	}
	return s.LastUpdateTime.UTC().Format(time.RFC3339Nano)
}
