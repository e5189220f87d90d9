// Package hypernode admits topology.volcano.sh/v1alpha1 HyperNodes: it
// refuses the members the CRD schema lets through but no node or HyperNode
// can match (apis/topology/v1alpha1/validation), and HyperNode members that
// would close a cycle through the HyperNodes that exist.
package hypernode

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	topologyvalidation "github.com/caldera-sh/caldera/apis/topology/v1alpha1/validation"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
)

var groupKind = topologyv1alpha1.SchemeGroupVersion.WithKind("HyperNode").GroupKind()

// Webhook validates HyperNodes. Of the tree-wide rules it checks only that
// the HyperNodes form no cycle, which no order of writes can make
// consistent. The others (a node in one leaf, a HyperNode under one
// parent) are left to the HyperNode controller: HyperNodes are usually
// written by network discovery in batches, and an order-dependent admission
// check would refuse a consistent batch applied in the wrong order. (A batch
// that swaps a parent and its child must still drop the old link first.)
type Webhook struct {
	reader lookup.Reader
}

var _ admission.Validator[*topologyv1alpha1.HyperNode] = &Webhook{}

// NewWebhook returns the HyperNode webhook; reader reads the other
// HyperNodes.
func NewWebhook(reader lookup.Reader) *Webhook {
	return &Webhook{reader: reader}
}

// ValidateCreate checks a new HyperNode.
func (w *Webhook) ValidateCreate(ctx context.Context, hn *topologyv1alpha1.HyperNode) (admission.Warnings, error) {
	return nil, w.validate(ctx, nil, hn)
}

// ValidateUpdate checks a changed HyperNode; only the HyperNode members it
// adds are checked for cycles, so that a cycle that predates the webhook
// does not block unrelated updates.
func (w *Webhook) ValidateUpdate(ctx context.Context, old, hn *topologyv1alpha1.HyperNode) (admission.Warnings, error) {
	return nil, w.validate(ctx, old, hn)
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *topologyv1alpha1.HyperNode) (admission.Warnings, error) {
	return nil, nil
}

func (w *Webhook) validate(ctx context.Context, old, hn *topologyv1alpha1.HyperNode) error {
	errs := topologyvalidation.ValidateHyperNode(hn)
	cycleErrs, err := w.reader.Confirmed(ctx, func(ctx context.Context, c client.Reader) (field.ErrorList, error) {
		return validateCycles(ctx, c, old, hn)
	})
	if err != nil {
		return admit.Internal("checking the HyperNode tree for cycles", err)
	}
	return admit.Invalid(groupKind, hn.Name, append(errs, cycleErrs...))
}

// validateCycles refuses each HyperNode member of hn (added since old, nil
// on create) below which hn itself sits. Only exactMatch selects
// HyperNodes (the CRD schema refuses the other selectors for them), and a
// HyperNode listing itself is ValidateHyperNode's to refuse.
func validateCycles(ctx context.Context, c client.Reader, old, hn *topologyv1alpha1.HyperNode) (field.ErrorList, error) {
	had := map[string]bool{}
	if old != nil {
		for _, name := range hyperNodeMembers(old) {
			had[name] = true
		}
	}
	type member struct {
		index int
		name  string
	}
	var added []member
	for i, m := range hn.Spec.Members {
		if name := exactHyperNode(m); name != "" && name != hn.Name && !had[name] {
			added = append(added, member{index: i, name: name})
		}
	}
	if len(added) == 0 {
		return nil, nil
	}

	var list topologyv1alpha1.HyperNodeList
	if err := c.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing HyperNodes: %w", err)
	}
	children := make(map[string][]string, len(list.Items)+1)
	for i := range list.Items {
		children[list.Items[i].Name] = hyperNodeMembers(&list.Items[i])
	}
	children[hn.Name] = hyperNodeMembers(hn)

	var errs field.ErrorList
	membersPath := field.NewPath("spec", "members")
	for _, m := range added {
		if path := pathDown(children, m.name, hn.Name); path != nil {
			cycle := append([]string{hn.Name}, path...)
			errs = append(errs, field.Invalid(membersPath.Index(m.index).Child("selector", "exactMatch", "name"), m.name,
				"the HyperNodes would form a cycle: "+strings.Join(cycle, " -> ")))
		}
	}
	return errs, nil
}

// pathDown returns the shortest chain of HyperNodes from "from" down to
// "to" through their members, both ends included, or nil.
func pathDown(children map[string][]string, from, to string) []string {
	up := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var path []string
			for n := cur; n != ""; n = up[n] {
				path = append(path, n)
			}
			slices.Reverse(path)
			return path
		}
		for _, child := range children[cur] {
			if _, seen := up[child]; !seen {
				up[child] = cur
				queue = append(queue, child)
			}
		}
	}
	return nil
}

// hyperNodeMembers are the names of hn's HyperNode members.
func hyperNodeMembers(hn *topologyv1alpha1.HyperNode) []string {
	var names []string
	for _, m := range hn.Spec.Members {
		if name := exactHyperNode(m); name != "" {
			names = append(names, name)
		}
	}
	return names
}

func exactHyperNode(m topologyv1alpha1.MemberSpec) string {
	if m.Type != topologyv1alpha1.MemberTypeHyperNode || m.Selector.ExactMatch == nil {
		return ""
	}
	return m.Selector.ExactMatch.Name
}
