package testing

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeWrapper builds a Node.
type NodeWrapper struct{ corev1.Node }

// MakeNode starts a Ready node labelled with its hostname, with room for
// 110 pods.
func MakeNode(name string) *NodeWrapper {
	return &NodeWrapper{corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}}
}

// Obj returns the node.
func (n *NodeWrapper) Obj() *corev1.Node { return &n.Node }

// Alloc sets allocatable resources from name/quantity pairs (pods stay 110
// unless given); capacity becomes a copy of allocatable, as on a node that
// reserves nothing for the system.
func (n *NodeWrapper) Alloc(pairs ...string) *NodeWrapper {
	for i := 0; i+1 < len(pairs); i += 2 {
		n.Status.Allocatable[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	n.Status.Capacity = n.Status.Allocatable.DeepCopy()
	return n
}

// Label sets a label.
func (n *NodeWrapper) Label(k, v string) *NodeWrapper {
	n.Labels[k] = v
	return n
}

// Zone sets the well-known zone label.
func (n *NodeWrapper) Zone(zone string) *NodeWrapper {
	return n.Label(corev1.LabelTopologyZone, zone)
}

// Taint adds a taint.
func (n *NodeWrapper) Taint(key, value string, effect corev1.TaintEffect) *NodeWrapper {
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	return n
}

// Unschedulable cordons the node.
func (n *NodeWrapper) Unschedulable() *NodeWrapper {
	n.Spec.Unschedulable = true
	return n
}

// Image records an image present on the node.
func (n *NodeWrapper) Image(name string, sizeBytes int64) *NodeWrapper {
	n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: []string{name}, SizeBytes: sizeBytes})
	return n
}
