package model

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/quantity"
	schedapi "github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/topology"
)

// Node is a row of the node list.
type Node struct {
	Name          string `json:"name"`
	Ready         bool   `json:"ready"`
	Unschedulable bool   `json:"unschedulable,omitempty"`
	// HyperNode is the HyperNode the node is a direct member of.
	HyperNode string `json:"hyperNode,omitempty"`
	// Resources are what the node offers and what its pods request.
	Resources []Usage `json:"resources"`
	// Pods are the pods on the node that have not finished.
	Pods []NodePod `json:"pods"`
	// Cards are the node's shared GPU cards (volcano.sh/gpu-number).
	Cards []Card `json:"cards,omitempty"`

	allocatable, requested Amounts
}

// Usage is a resource of a node or of the nodes under a HyperNode.
type Usage struct {
	Resource    string `json:"resource"`
	Allocatable string `json:"allocatable"`
	Requested   string `json:"requested"`
	// Use is Requested as a fraction of Allocatable (0 when nothing is
	// allocatable).
	Use float64 `json:"use"`
}

// NodePod is a pod on a node.
type NodePod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Group is the pod's PodGroup; Queue the PodGroup's queue.
	Group string `json:"group,omitempty"`
	Queue string `json:"queue,omitempty"`
	Cards []int  `json:"cards,omitempty"`
}

// Card is one GPU card of a node.
type Card struct {
	Index   int  `json:"index"`
	Healthy bool `json:"healthy"`
	// Memory is the card's memory and Used what its pods hold of it, in
	// MiB: a pod that took the card whole holds all of it.
	Memory int64 `json:"memoryMiB"`
	Used   int64 `json:"usedMiB"`
	// Pods are namespace/name of the pods on the card.
	Pods []string `json:"pods"`
}

// shown reports whether a node's resource is worth a column: not the pod
// count or scratch space, which every node has.
func shown(r corev1.ResourceName) bool {
	return r != corev1.ResourcePods && r != corev1.ResourceEphemeralStorage &&
		!strings.HasPrefix(string(r), corev1.ResourceHugePagesPrefix)
}

func usage(alloc, req Amounts) []Usage {
	names := make([]corev1.ResourceName, 0, len(alloc))
	for r, v := range alloc {
		if shown(r) && v > 0 {
			names = append(names, r)
		}
	}
	for r, v := range req {
		if _, ok := alloc[r]; !ok && shown(r) && v > 0 {
			names = append(names, r)
		}
	}
	slices.SortFunc(names, quantity.CompareNames)
	out := make([]Usage, len(names))
	for i, r := range names {
		out[i] = Usage{Resource: string(r), Allocatable: format(r, alloc[r]), Requested: format(r, req[r])}
		if a := alloc[r]; a > 0 {
			out[i].Use = float64(req[r]) / float64(a)
		}
	}
	return out
}

func (m *Model) buildNodes(in Input, pods podIndex, tree *topology.Tree) {
	queueOfGroup := map[string]string{}
	for _, e := range m.jobByKey {
		if e.podGroup != nil {
			queueOfGroup[key(e.podGroup.Namespace, e.podGroup.Name)] = e.row.Queue
		}
	}
	nodes := slices.Clone(in.Nodes)
	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return cmp.Compare(a.Name, b.Name) })
	m.nodes = make([]Node, len(nodes))
	for i, n := range nodes {
		row := Node{Name: n.Name, Ready: ready(n), Unschedulable: n.Spec.Unschedulable,
			allocatable: amountsOf(n.Status.Allocatable), requested: Amounts{}, Pods: []NodePod{}}
		if h := tree.LeafOf[n.Name]; h != nil {
			row.HyperNode = h.Name
		}
		row.Cards = cards(n, row.allocatable)
		for _, pp := range pods.byNode[n.Name] {
			p := pp.pod
			row.requested.add(pp.req, 1)
			np := NodePod{Namespace: p.Namespace, Name: p.Name, Group: podGroupOf(p), Cards: cardsOf(p)}
			if np.Group != "" {
				np.Queue = queueOfGroup[key(p.Namespace, np.Group)]
			}
			row.Pods = append(row.Pods, np)
			if len(row.Cards) > 0 {
				holdCards(row.Cards, p, pp.req, np.Cards)
			}
		}
		row.Resources = usage(row.allocatable, row.requested)
		m.nodes[i] = row
	}
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// cards lays out a node's shared GPU cards: the memory it offers split
// evenly over the cards it counts, the unhealthy ones it names at 0.
func cards(n *corev1.Node, alloc Amounts) []Card {
	count := alloc[schedulingv1beta1.GPUNumberResource] / 1000
	if count <= 0 {
		return nil
	}
	per := alloc[schedulingv1beta1.GPUMemoryResource] / 1000 / count
	out := make([]Card, count)
	for i := range out {
		out[i] = Card{Index: i, Healthy: true, Memory: per, Pods: []string{}}
	}
	unhealthy, _ := schedapi.ParseGPUIndex(n.Annotations[schedulingv1beta1.GPUUnhealthyAnnotation])
	for _, i := range unhealthy {
		if i < len(out) {
			out[i].Healthy = false
		}
	}
	return out
}

// holdCards puts a pod on its cards: its share of each card's memory, or
// all of a card it took whole.
func holdCards(cards []Card, p *corev1.Pod, req Amounts, indexes []int) {
	share := req[schedulingv1beta1.GPUMemoryResource] / 1000
	whole := req[schedulingv1beta1.GPUNumberResource] > 0
	for _, i := range indexes {
		if i >= len(cards) {
			continue
		}
		c := &cards[i]
		if whole || share == 0 {
			c.Used += c.Memory
		} else {
			c.Used += share
		}
		c.Pods = append(c.Pods, p.Namespace+"/"+p.Name)
	}
}

// NodeFilter selects and pages the node list.
type NodeFilter struct {
	// Search keeps the nodes whose name contains it.
	Search string
	// HyperNode keeps the nodes under it, at any depth.
	HyperNode string
	Page      int
	PageSize  int
}

// NodePage is a page of the node list.
type NodePage struct {
	Total int    `json:"total"`
	Page  int    `json:"page"`
	Items []Node `json:"items"`
}

// Nodes returns a page of the nodes the filter selects, by name.
func (m *Model) Nodes(f NodeFilter) NodePage {
	var under map[string]bool
	if f.HyperNode != "" {
		under = map[string]bool{}
		for _, h := range m.hyperNodes {
			if h.Name == f.HyperNode {
				for _, n := range h.nodes {
					under[n] = true
				}
			}
		}
	}
	var sel []int
	for i, n := range m.nodes {
		if (f.Search == "" || strings.Contains(n.Name, f.Search)) && (under == nil || under[n.Name]) {
			sel = append(sel, i)
		}
	}
	page, idx := paginate(sel, f.Page, f.PageSize)
	items := make([]Node, len(idx))
	for i, j := range idx {
		items[i] = m.nodes[j]
	}
	return NodePage{Total: len(sel), Page: page, Items: items}
}

// HyperNode is a row of the HyperNode tree.
type HyperNode struct {
	Name     string `json:"name"`
	Tier     int32  `json:"tier"`
	TierName string `json:"tierName,omitempty"`
	Parent   string `json:"parent,omitempty"`
	Depth    int    `json:"depth"`
	// Nodes counts the nodes under the HyperNode, at any depth.
	Nodes      int `json:"nodes"`
	ReadyNodes int `json:"readyNodes"`
	// Resources are the sums over those nodes.
	Resources []Usage `json:"resources"`
	// Problems are the topology rules the HyperNode breaks, in words.
	Problems []string `json:"problems,omitempty"`

	nodes []string
}

func (m *Model) buildHyperNodes(tree *topology.Tree) {
	byName := make(map[string]*Node, len(m.nodes))
	for i := range m.nodes {
		byName[m.nodes[i].Name] = &m.nodes[i]
	}
	problems := map[string][]string{}
	for _, p := range tree.Problems {
		problems[p.HyperNode] = append(problems[p.HyperNode], p.Message)
	}
	var roots []*topology.HyperNode
	for _, h := range tree.List {
		if h.Parent == nil {
			roots = append(roots, h)
		}
	}
	// The highest tier first: the tree is read from the top down.
	slices.SortFunc(roots, func(a, b *topology.HyperNode) int {
		return cmp.Or(cmp.Compare(b.Tier, a.Tier), cmp.Compare(a.Name, b.Name))
	})
	var walk func(h *topology.HyperNode, depth int)
	walk = func(h *topology.HyperNode, depth int) {
		row := HyperNode{Name: h.Name, Tier: h.Tier, TierName: h.TierName, Depth: depth, Nodes: len(h.Nodes),
			Problems: problems[h.Name], nodes: h.Nodes}
		if h.Parent != nil {
			row.Parent = h.Parent.Name
		}
		alloc, req := Amounts{}, Amounts{}
		for _, name := range h.Nodes {
			n := byName[name]
			if n == nil {
				continue
			}
			if n.Ready {
				row.ReadyNodes++
			}
			alloc.add(n.allocatable, 1)
			req.add(n.requested, 1)
		}
		row.Resources = usage(alloc, req)
		m.hyperNodes = append(m.hyperNodes, row)
		for _, c := range h.Children {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
}

// HyperNodes returns the HyperNode trees depth first, the highest tier's
// trees first.
func (m *Model) HyperNodes() []HyperNode { return orEmpty(m.hyperNodes) }
