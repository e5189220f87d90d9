// Package hypernode admits topology.volcano.sh/v1alpha1 HyperNodes: it
// refuses the members the CRD schema lets through but no node or HyperNode
// can match (apis/topology/v1alpha1/validation).
package hypernode

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	topologyvalidation "github.com/caldera-sh/caldera/apis/topology/v1alpha1/validation"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
)

var groupKind = topologyv1alpha1.SchemeGroupVersion.WithKind("HyperNode").GroupKind()

// Webhook validates HyperNodes. The tree-wide rules (a node in one leaf, a
// HyperNode under one parent, no cycles) are left to the HyperNode
// controller: HyperNodes are usually written by network discovery in
// batches, and an order-dependent admission check would refuse a consistent
// batch applied in the wrong order.
type Webhook struct{}

var _ admission.Validator[*topologyv1alpha1.HyperNode] = Webhook{}

// ValidateCreate checks a new HyperNode.
func (Webhook) ValidateCreate(_ context.Context, hn *topologyv1alpha1.HyperNode) (admission.Warnings, error) {
	return nil, admit.Invalid(groupKind, hn.Name, topologyvalidation.ValidateHyperNode(hn))
}

// ValidateUpdate checks a changed HyperNode.
func (Webhook) ValidateUpdate(_ context.Context, _, hn *topologyv1alpha1.HyperNode) (admission.Warnings, error) {
	return nil, admit.Invalid(groupKind, hn.Name, topologyvalidation.ValidateHyperNode(hn))
}

// ValidateDelete allows every deletion.
func (Webhook) ValidateDelete(context.Context, *topologyv1alpha1.HyperNode) (admission.Warnings, error) {
	return nil, nil
}
