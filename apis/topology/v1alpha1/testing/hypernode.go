// Package testing builds topology.volcano.sh objects for tests.
package testing

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
)

// HyperNodeWrapper builds a HyperNode.
type HyperNodeWrapper struct{ hn topologyv1alpha1.HyperNode }

// MakeHyperNode returns a HyperNode of the given name and tier without members.
func MakeHyperNode(name string, tier int32) *HyperNodeWrapper {
	return &HyperNodeWrapper{hn: topologyv1alpha1.HyperNode{
		TypeMeta: metav1.TypeMeta{
			APIVersion: topologyv1alpha1.SchemeGroupVersion.String(),
			Kind:       "HyperNode",
		},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       topologyv1alpha1.HyperNodeSpec{Tier: tier},
	}}
}

// Obj returns a copy of the built HyperNode.
func (w *HyperNodeWrapper) Obj() *topologyv1alpha1.HyperNode { return w.hn.DeepCopy() }

// TierName sets the name of the tier.
func (w *HyperNodeWrapper) TierName(name string) *HyperNodeWrapper {
	w.hn.Spec.TierName = name
	return w
}

// Member appends a member as given.
func (w *HyperNodeWrapper) Member(m topologyv1alpha1.MemberSpec) *HyperNodeWrapper {
	w.hn.Spec.Members = append(w.hn.Spec.Members, m)
	return w
}

// ExactNode appends a node member selected by name.
func (w *HyperNodeWrapper) ExactNode(name string) *HyperNodeWrapper {
	return w.exact(topologyv1alpha1.MemberTypeNode, name)
}

// ExactHyperNode appends a HyperNode member selected by name.
func (w *HyperNodeWrapper) ExactHyperNode(name string) *HyperNodeWrapper {
	return w.exact(topologyv1alpha1.MemberTypeHyperNode, name)
}

func (w *HyperNodeWrapper) exact(t topologyv1alpha1.MemberType, name string) *HyperNodeWrapper {
	return w.Member(topologyv1alpha1.MemberSpec{
		Type:     t,
		Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: name}},
	})
}

// RegexNodes appends a node member selected by a name pattern.
func (w *HyperNodeWrapper) RegexNodes(pattern string) *HyperNodeWrapper {
	return w.Member(topologyv1alpha1.MemberSpec{
		Type:     topologyv1alpha1.MemberTypeNode,
		Selector: topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: pattern}},
	})
}

// LabelNodes appends a node member selected by labels.
func (w *HyperNodeWrapper) LabelNodes(selector *metav1.LabelSelector) *HyperNodeWrapper {
	return w.Member(topologyv1alpha1.MemberSpec{
		Type:     topologyv1alpha1.MemberTypeNode,
		Selector: topologyv1alpha1.MemberSelector{LabelMatch: selector},
	})
}
