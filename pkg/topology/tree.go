// Package topology builds the network topology tree from HyperNodes and
// nodes: which nodes each HyperNode holds, at any depth, its parent and its
// children, and the problems that keep the HyperNodes from forming one
// tree. The scheduler places jobs with it; the HyperNode controller reports
// its problems and node counts. It is pure: objects in, tree out.
//
// The rules, and how a problem is resolved (deterministically, so that the
// scheduler and the controller see the same tree):
//   - a HyperNode is the member of at most one HyperNode: of several, the
//     parent with the smallest name keeps it;
//   - a parent's tier is above its children's: a member of the same or a
//     higher tier is ignored (so the tree has no cycles);
//   - a node is the direct member of at most one HyperNode: the one of the
//     lowest tier, then the smallest name, keeps it;
//   - a member that selects nothing is reported.
package topology

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
)

// HyperNode is a HyperNode placed in the tree.
type HyperNode struct {
	Name     string
	Tier     int32
	TierName string
	// Parent is nil for a HyperNode at the top of its tree.
	Parent *HyperNode
	// Children are the member HyperNodes, by name.
	Children []*HyperNode
	// Nodes are the names of the nodes below, at any depth, sorted.
	Nodes []string
	// Index is the HyperNode's position in Tree.List.
	Index int
	// Object is the HyperNode the entry was built from.
	Object *topologyv1alpha1.HyperNode
}

// Contains reports whether the node is below the HyperNode.
func (h *HyperNode) Contains(node string) bool {
	_, ok := slices.BinarySearch(h.Nodes, node)
	return ok
}

// Problem is a rule a HyperNode breaks, and how the tree was built anyway.
type Problem struct {
	HyperNode string
	// Reason is a CamelCase word: MultipleParents, TierNotAbove,
	// NodeInSeveralHyperNodes, MemberNotFound, InvalidSelector.
	Reason  string
	Message string
}

// Problem reasons.
const (
	ReasonMultipleParents        = "MultipleParents"
	ReasonTierNotAbove           = "TierNotAbove"
	ReasonNodeInSeveralHyperNode = "NodeInSeveralHyperNodes"
	ReasonMemberNotFound         = "MemberNotFound"
	ReasonInvalidSelector        = "InvalidSelector"
)

// Tree is the network topology.
type Tree struct {
	// List holds every HyperNode, by tier then name.
	List []*HyperNode
	// ByName finds a HyperNode.
	ByName map[string]*HyperNode
	// LeafOf maps a node to the HyperNode it is a direct member of.
	LeafOf map[string]*HyperNode
	// TierNames maps tier names to tiers.
	TierNames map[string]int32
	// Problems are sorted by HyperNode, then reason.
	Problems []Problem
}

// Empty reports whether the tree has no HyperNodes.
func (t *Tree) Empty() bool { return t == nil || len(t.List) == 0 }

// Ancestors returns the HyperNodes above a node, lowest tier first.
func (t *Tree) Ancestors(node string) []*HyperNode {
	var out []*HyperNode
	for h := t.LeafOf[node]; h != nil; h = h.Parent {
		out = append(out, h)
	}
	return out
}

// Build makes the tree of the HyperNodes over the nodes.
func Build(hyperNodes []*topologyv1alpha1.HyperNode, nodes []*corev1.Node) *Tree {
	t := &Tree{ByName: map[string]*HyperNode{}, LeafOf: map[string]*HyperNode{}, TierNames: map[string]int32{}}
	sorted := slices.Clone(hyperNodes)
	slices.SortFunc(sorted, func(a, b *topologyv1alpha1.HyperNode) int {
		return cmp.Or(cmp.Compare(a.Spec.Tier, b.Spec.Tier), cmp.Compare(a.Name, b.Name))
	})
	for i, o := range sorted {
		h := &HyperNode{Name: o.Name, Tier: o.Spec.Tier, TierName: o.Spec.TierName, Index: i, Object: o}
		t.List = append(t.List, h)
		t.ByName[h.Name] = h
		if h.TierName != "" {
			if tier, ok := t.TierNames[h.TierName]; !ok || h.Tier < tier {
				t.TierNames[h.TierName] = h.Tier
			}
		}
	}
	nodeNames := make([]string, 0, len(nodes))
	byName := make(map[string]*corev1.Node, len(nodes))
	for _, n := range nodes {
		nodeNames = append(nodeNames, n.Name)
		byName[n.Name] = n
	}
	slices.Sort(nodeNames)

	// Parents, in name order so that the smallest name keeps a child.
	parentsOf := map[string][]string{}
	direct := map[string][]string{}
	for _, h := range sortedByName(t.List) {
		for _, m := range h.Object.Spec.Members {
			switch m.Type {
			case topologyv1alpha1.MemberTypeHyperNode:
				name := exactName(m.Selector)
				child := t.ByName[name]
				switch {
				case child == nil:
					t.problem(h.Name, ReasonMemberNotFound, "member HyperNode %q does not exist", name)
				case child.Tier >= h.Tier:
					t.problem(h.Name, ReasonTierNotAbove, "member HyperNode %s has tier %d, not below this HyperNode's %d; it is ignored", name, child.Tier, h.Tier)
				default:
					parentsOf[name] = append(parentsOf[name], h.Name)
				}
			default:
				matched, err := matchNodes(m.Selector, nodeNames, byName)
				if err != nil {
					t.problem(h.Name, ReasonInvalidSelector, "%v", err)
					continue
				}
				if len(matched) == 0 {
					t.problem(h.Name, ReasonMemberNotFound, "member %s matches no node", describe(m.Selector))
				}
				for _, n := range matched {
					direct[n] = append(direct[n], h.Name)
				}
			}
		}
	}
	for child, parents := range parentsOf {
		slices.Sort(parents)
		parents = slices.Compact(parents)
		c := t.ByName[child]
		c.Parent = t.ByName[parents[0]]
		c.Parent.Children = append(c.Parent.Children, c)
		if len(parents) > 1 {
			t.problem(child, ReasonMultipleParents, "the HyperNode is a member of %v; it is kept under %s", parents, parents[0])
		}
	}
	for node, owners := range direct {
		owners = slices.Compact(owners)
		slices.SortFunc(owners, func(a, b string) int {
			return cmp.Or(cmp.Compare(t.ByName[a].Tier, t.ByName[b].Tier), cmp.Compare(a, b))
		})
		t.LeafOf[node] = t.ByName[owners[0]]
		if len(owners) > 1 {
			for _, o := range owners[1:] {
				t.problem(o, ReasonNodeInSeveralHyperNode, "node %s is also a member of %s, which keeps it", node, owners[0])
			}
		}
	}
	// Node sets, children before parents: List is by tier.
	for node, h := range t.LeafOf {
		h.Nodes = append(h.Nodes, node)
	}
	for _, h := range t.List {
		slices.SortFunc(h.Children, func(a, b *HyperNode) int { return cmp.Compare(a.Name, b.Name) })
		for _, c := range h.Children {
			h.Nodes = append(h.Nodes, c.Nodes...)
		}
		slices.Sort(h.Nodes)
		h.Nodes = slices.Compact(h.Nodes)
	}
	slices.SortFunc(t.Problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.HyperNode, b.HyperNode), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Message, b.Message))
	})
	return t
}

func (t *Tree) problem(hn, reason, format string, args ...any) {
	t.Problems = append(t.Problems, Problem{HyperNode: hn, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

func sortedByName(list []*HyperNode) []*HyperNode {
	out := slices.Clone(list)
	slices.SortFunc(out, func(a, b *HyperNode) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func exactName(s topologyv1alpha1.MemberSelector) string {
	if s.ExactMatch != nil {
		return s.ExactMatch.Name
	}
	return ""
}

// matchNodes returns the names of the nodes a Node member selects, sorted.
func matchNodes(s topologyv1alpha1.MemberSelector, names []string, nodes map[string]*corev1.Node) ([]string, error) {
	switch {
	case s.ExactMatch != nil:
		if _, ok := nodes[s.ExactMatch.Name]; ok {
			return []string{s.ExactMatch.Name}, nil
		}
		return nil, nil
	case s.RegexMatch != nil:
		re, err := regexp.Compile(s.RegexMatch.Pattern)
		if err != nil {
			return nil, fmt.Errorf("regexMatch pattern %q: %w", s.RegexMatch.Pattern, err)
		}
		var out []string
		for _, n := range names {
			if re.MatchString(n) {
				out = append(out, n)
			}
		}
		return out, nil
	case s.LabelMatch != nil:
		sel, err := metav1.LabelSelectorAsSelector(s.LabelMatch)
		if err != nil {
			return nil, fmt.Errorf("labelMatch: %w", err)
		}
		if sel.Empty() {
			return nil, fmt.Errorf("labelMatch selects every node")
		}
		var out []string
		for _, n := range names {
			if sel.Matches(labels.Set(nodes[n].Labels)) {
				out = append(out, n)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("the selector sets none of exactMatch, regexMatch and labelMatch")
}

func describe(s topologyv1alpha1.MemberSelector) string {
	switch {
	case s.ExactMatch != nil:
		return fmt.Sprintf("exactMatch %q", s.ExactMatch.Name)
	case s.RegexMatch != nil:
		return fmt.Sprintf("regexMatch %q", s.RegexMatch.Pattern)
	case s.LabelMatch != nil:
		return "labelMatch " + metav1.FormatLabelSelector(s.LabelMatch)
	}
	return "with no selector"
}
