package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HyperNode is one network performance domain: nodes (in a leaf HyperNode) or
// HyperNodes (in an inner one) that reach each other through the same switch
// layer. The scheduler places a job with a network topology constraint inside
// the lowest-tier HyperNode that can hold it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=hypernodes,shortName=hn,scope=Cluster
// +kubebuilder:printcolumn:name="Tier",type=string,JSONPath=`.spec.tier`
// +kubebuilder:printcolumn:name="TierName",type=string,JSONPath=`.spec.tierName`
// +kubebuilder:printcolumn:name="NodeCount",type=integer,JSONPath=`.status.nodeCount`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`,description="The status of the Valid condition the HyperNode controller sets: True when the HyperNode breaks none of the topology tree's rules"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].reason`,priority=1,description="The reason of the Valid condition: the first rule the HyperNode breaks"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type HyperNode struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the place of this HyperNode in the topology tree and its members.
	// +required
	Spec HyperNodeSpec `json:"spec"`

	// Status is what the controller observed about the HyperNode.
	// +optional
	Status HyperNodeStatus `json:"status,omitempty"`
}

// HyperNodeSpec places a HyperNode in the topology tree.
type HyperNodeSpec struct {
	// Tier is the level of this HyperNode in the tree, counted from the nodes:
	// 1 for a HyperNode whose members are nodes, higher for the HyperNodes above
	// it. The lower the tier, the faster the network inside the HyperNode.
	// +required
	// +kubebuilder:validation:Minimum=1
	Tier int32 `json:"tier"`

	// TierName names the level, for example "rack" or the node label key the
	// level was discovered from. Jobs may refer to a level by this name
	// (networkTopology.highestTierName) instead of by number.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	TierName string `json:"tierName,omitempty"`

	// Members are the nodes or HyperNodes this HyperNode contains. At most
	// 4096: a leaf that lists every node of a large switch by exactMatch stays
	// far below it, and the bound lets the API server price the per-member CEL
	// rules.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4096
	Members []MemberSpec `json:"members,omitempty"`
}

// MemberType says whether a member selects nodes or HyperNodes.
// +kubebuilder:validation:Enum=Node;HyperNode
type MemberType string

// Member types.
const (
	// MemberTypeNode selects Kubernetes nodes; a HyperNode with such members is
	// a leaf of the tree.
	MemberTypeNode MemberType = "Node"
	// MemberTypeHyperNode selects a child HyperNode by name.
	MemberTypeHyperNode MemberType = "HyperNode"
)

// MemberSpec is one member of a HyperNode: a selector and what it selects.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'HyperNode' || has(self.selector.exactMatch)",message="a member of type HyperNode must be selected by exactMatch; regexMatch and labelMatch select nodes only",fieldPath=.selector
type MemberSpec struct {
	// Type says what the selector selects: Node or HyperNode.
	// +required
	Type MemberType `json:"type"`

	// Selector picks the members by exact name, by name pattern or by labels.
	// +required
	Selector MemberSelector `json:"selector"`
}

// MemberSelector selects members in exactly one way.
//
// +kubebuilder:validation:XValidation:rule="(has(self.exactMatch) ? 1 : 0) + (has(self.regexMatch) ? 1 : 0) + (has(self.labelMatch) ? 1 : 0) == 1",message="selector must set exactly one of exactMatch, regexMatch or labelMatch"
// +kubebuilder:validation:XValidation:rule="!has(self.labelMatch) || (has(self.labelMatch.matchLabels) && size(self.labelMatch.matchLabels) > 0) || (has(self.labelMatch.matchExpressions) && size(self.labelMatch.matchExpressions) > 0)",message="labelMatch must set matchLabels or matchExpressions: an empty selector would match every node",fieldPath=.labelMatch
type MemberSelector struct {
	// ExactMatch selects the one node or HyperNode with this name.
	// +optional
	ExactMatch *ExactMatch `json:"exactMatch,omitempty"`

	// RegexMatch selects every node whose name matches a regular expression.
	// +optional
	RegexMatch *RegexMatch `json:"regexMatch,omitempty"`

	// LabelMatch selects every node whose labels match. It applies to members
	// of type Node only.
	// +optional
	LabelMatch *metav1.LabelSelector `json:"labelMatch,omitempty"`
}

// ExactMatch selects a member by name.
type ExactMatch struct {
	// Name is the name of the node or HyperNode.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// RegexMatch selects nodes by name.
type RegexMatch struct {
	// Pattern is a regular expression (Go RE2 syntax) matched against node
	// names, for example "^rack1-node-[0-9]+$". It is not anchored implicitly.
	// +required
	// +kubebuilder:validation:MinLength=1
	Pattern string `json:"pattern"`
}

// HyperNodeConditionType is the type of a HyperNode condition. Network
// discovery components may set them for the switch a HyperNode stands for.
type HyperNodeConditionType string

// Condition types a HyperNode may carry.
const (
	// SystemFailureType means the switch has a system fault (CPU or memory
	// overload, power, fans, ...).
	SystemFailureType HyperNodeConditionType = "SystemFailure"
	// NetworkUnavailableType means the switch has a network fault (link down,
	// interface failure, ...).
	NetworkUnavailableType HyperNodeConditionType = "NetworkUnavailable"
)

// HyperNodeStatus is what the controller observed about a HyperNode.
type HyperNodeStatus struct {
	// Conditions are the latest observations of the HyperNode's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// NodeCount is the number of nodes below this HyperNode, at any depth.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeCount int64 `json:"nodeCount,omitempty"`

	// UnhealthyNodes are member nodes whose network interfaces misbehave (high
	// bit error rate, flapping links, ...), as reported by network discovery.
	// +optional
	// +listType=map
	// +listMapKey=name
	UnhealthyNodes []UnhealthyNode `json:"unhealthyNodes,omitempty"`

	// ObservedGeneration is the spec generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// UnhealthyNode is a node with a network problem and why.
type UnhealthyNode struct {
	// Name is the node name.
	// +required
	Name string `json:"name"`

	// Reason says what is wrong with the node's network.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// HyperNodeList is a list of HyperNodes.
//
// +kubebuilder:object:root=true
type HyperNodeList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []HyperNode `json:"items"`
}
