// Package networktopologyaware places jobs with a network topology
// constraint (a PodGroup's networkTopology) inside the HyperNodes of the
// network topology, and packs HyperNodes.
//
// A job in hard mode is placed whole within one HyperNode whose tier is at
// most highestTierAllowed (or the tier named by highestTierName; 0 means a
// single node), or not at all. In soft mode the same HyperNodes are tried
// first, and the job is placed anywhere when none holds it. HyperNodes are
// tried lowest tier first, and within a tier the fullest first, so that a
// partly used HyperNode fills before an empty one is opened and whole
// HyperNodes stay free for large jobs. A job that already runs pods stays
// within a HyperNode holding them. Pods without a constraint are steered
// the same way by a node score: nodes under fuller HyperNodes score higher,
// each tier weighing fading^(tier-1).
package networktopologyaware

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/pluginargs"
	"github.com/caldera-sh/caldera/pkg/topology"
)

// Name is the plugin's name in the configuration.
const Name = "network-topology-aware"

// MaxNodeScore is the node score of a node under full HyperNodes.
const MaxNodeScore = 100

// Plugin is the network-topology-aware plugin.
type Plugin struct {
	weight    float64
	weights   map[corev1.ResourceName]float64
	order     []corev1.ResourceName
	normalPod bool
	fading    float64

	ssn  *framework.Session
	tree *topology.Tree
	// domains holds each HyperNode's nodes of the snapshot, by index.
	domains []*framework.Domain
	// nodeScore is each node's packing score for pods without a
	// constraint, from the HyperNodes' fill when the cycle opened, scaled
	// to MaxNodeScore and the plugin's weight.
	nodeScore map[string]float64
}

var (
	_ framework.SessionPlugin     = &Plugin{}
	_ framework.TopologyPlugin    = &Plugin{}
	_ framework.NodeScorePlugin   = &Plugin{}
	_ framework.ScoreKeeperPlugin = &Plugin{}
	_ framework.SignerPlugin      = &Plugin{}
)

// New builds the plugin from *NetworkTopologyAwareArgs (nil: defaults).
func New(args any, _ *framework.Handle) (framework.Plugin, error) {
	a, err := pluginargs.Typed[configv1alpha1.NetworkTopologyAwareArgs](Name, args)
	if err != nil {
		return nil, err
	}
	p := &Plugin{
		weight: float64(*a.Weight),
		weights: map[corev1.ResourceName]float64{
			corev1.ResourceCPU:    float64(*a.BinpackCPU),
			corev1.ResourceMemory: float64(*a.BinpackMemory),
		},
		normalPod: *a.NormalPodBinpack,
		fading:    *a.NormalPodFading,
	}
	for name, w := range a.BinpackResources {
		p.weights[name] = float64(w)
	}
	p.order = slices.Sorted(maps.Keys(p.weights))
	return p, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen resolves each HyperNode's nodes in the snapshot and the
// packing score of every node.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	p.ssn = ssn
	p.tree = ssn.Snapshot.Topology
	p.domains = make([]*framework.Domain, len(p.tree.List))
	for i, h := range p.tree.List {
		d := &framework.Domain{Name: h.Name, Tier: h.Tier, Nodes: make([]*api.NodeInfo, 0, len(h.Nodes))}
		for _, name := range h.Nodes {
			if n := ssn.Snapshot.Nodes[name]; n != nil {
				d.Nodes = append(d.Nodes, n)
			}
		}
		p.domains[i] = d
	}
	p.nodeScore = nil
	if p.normalPod && p.weight > 0 && !p.tree.Empty() {
		p.nodeScore = map[string]float64{}
		fill := make([]float64, len(p.domains))
		for i, d := range p.domains {
			fill[i] = p.fill(d)
		}
		// The largest score: full HyperNodes at every level of the
		// deepest tree.
		best, w := 0.0, 1.0
		for range maxDepth(p.tree) {
			best += w
			w *= p.fading
		}
		scale := p.weight * MaxNodeScore / max(best, 1e-9)
		for _, n := range ssn.Snapshot.NodeList {
			score, w := 0.0, 1.0
			for _, h := range p.tree.Ancestors(n.Name) {
				score += w * fill[h.Index]
				w *= p.fading
			}
			p.nodeScore[n.Name] = score * scale
		}
	}
}

// OnSessionClose drops the cycle's state.
func (p *Plugin) OnSessionClose(*framework.Session) {
	p.ssn, p.tree, p.domains, p.nodeScore = nil, nil, nil, nil
}

// fill is how full a domain is, 0 to 1: its weighted share of requested
// resources over allocatable ones.
func (p *Plugin) fill(d *framework.Domain) float64 {
	used, alloc := &api.Resource{}, &api.Resource{}
	for _, n := range d.Nodes {
		used.Add(n.Used).Add(n.Pipelined)
		alloc.Add(n.Allocatable)
	}
	sum, weights := 0.0, 0.0
	for _, name := range p.order {
		w := p.weights[name]
		a := alloc.Get(name)
		if w <= 0 || a <= 0 {
			continue
		}
		sum += w * min(1, float64(used.Get(name))/float64(a))
		weights += w
	}
	if weights == 0 {
		return 0
	}
	return sum / weights
}

// Domains gives a job with a network topology constraint the HyperNodes
// it may be placed in, lowest tier first, fullest first within a tier;
// unless evicting, only those with room enough for its gang.
func (p *Plugin) Domains(job *api.JobInfo, evicting bool) *framework.Domains {
	if job.NetworkTopology == nil {
		return nil
	}
	return p.domainsFor(job.NetworkTopology, placedNodes(job.Tasks), stillNeeded(p.ssn, job), nil, evicting, jobSubject)
}

// SubGroupDomains gives a sub-group with a network topology constraint the
// HyperNodes it may be placed in, as Domains does for a job, their nodes
// limited to within; unless evicting, only those with room for all of the
// sub-group's pending tasks.
func (p *Plugin) SubGroupDomains(job *api.JobInfo, g *api.SubGroup, within *framework.Domain, evicting bool) *framework.Domains {
	if g.NetworkTopology == nil {
		return nil
	}
	need := &api.Resource{}
	for _, t := range g.Tasks {
		if t.Status == api.Pending && !t.BestEffort {
			need.Add(t.Resreq)
		}
	}
	tasks := make(map[api.TaskID]*api.TaskInfo, len(g.Tasks))
	for _, t := range g.Tasks {
		tasks[t.UID] = t
	}
	return p.domainsFor(g.NetworkTopology, placedNodes(tasks), need, within, evicting, subject{
		pods: fmt.Sprintf("sub-group %s", g.Name), gang: fmt.Sprintf("sub-group %s", g.Name),
	})
}

// subject names what is placed, in reasons.
type subject struct {
	// pods names the placed pods' owner: "the job".
	pods string
	// gang names what must fit at once: "the job's gang".
	gang string
}

var jobSubject = subject{pods: "the job", gang: "the job's gang"}

// domainsFor gives the HyperNodes (or, for tier 0, the nodes) within
// which pods that need need, already on the nodes placed, may be placed
// under nt; their nodes limited to within, when given.
func (p *Plugin) domainsFor(nt *schedulingv1beta1.NetworkTopologySpec, placed []string, need *api.Resource, within *framework.Domain, evicting bool, who subject) *framework.Domains {
	hard := nt.Mode != schedulingv1beta1.SoftNetworkTopologyMode
	refuse := func(format string, args ...any) *framework.Domains {
		if !hard {
			return nil
		}
		return &framework.Domains{Hard: true, Why: framework.Reasonf("TopologyConstraint", format, args...)}
	}
	limit := int32(-1)
	switch {
	case nt.HighestTierName != "":
		tier, ok := p.tree.TierNames[nt.HighestTierName]
		if !ok {
			return refuse("highestTierName %q names no tier of the network topology (tiers: %s)", nt.HighestTierName, p.tierNames())
		}
		limit = tier
	case nt.HighestTierAllowed != nil:
		limit = *nt.HighestTierAllowed
	}
	var allowed map[string]bool
	if within != nil {
		allowed = make(map[string]bool, len(within.Nodes))
		for _, n := range within.Nodes {
			allowed[n.Name] = true
		}
	}
	if limit == 0 {
		return p.singleNodes(placed, need, allowed, hard, evicting, who)
	}
	if p.tree.Empty() {
		return refuse("the cluster has no HyperNodes to place %s's pods within", who.pods)
	}
	type candidate struct {
		d    *framework.Domain
		fill float64
	}
	var candidates []candidate
	tried, roomless := 0, 0
	for i, h := range p.tree.List {
		if limit > 0 && h.Tier > limit {
			continue
		}
		if !containsAll(h, placed) {
			continue
		}
		d := p.domains[i]
		if allowed != nil {
			d = restrict(d, allowed)
			if len(d.Nodes) == 0 {
				continue
			}
		}
		tried++
		if !evicting && !need.LessEqual(futureIdle(d)) {
			roomless++
			continue
		}
		candidates = append(candidates, candidate{d: d, fill: p.fill(d)})
	}
	slices.SortStableFunc(candidates, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.d.Tier, b.d.Tier), cmp.Compare(b.fill, a.fill), cmp.Compare(a.d.Name, b.d.Name))
	})
	out := &framework.Domains{Hard: hard}
	for _, c := range candidates {
		out.List = append(out.List, c.d)
	}
	if len(out.List) == 0 && hard {
		bound := "any tier"
		if limit > 0 {
			bound = fmt.Sprintf("tier %d or below", limit)
		}
		if within != nil {
			bound += " within " + within.Name
		}
		switch {
		case tried == 0 && len(placed) > 0:
			out.Why = framework.Reasonf("TopologyConstraint", "no HyperNode of %s holds all the nodes %s already runs on (%s)", bound, who.pods, strings.Join(placed, ", "))
		case tried == 0:
			out.Why = framework.Reasonf("TopologyConstraint", "no HyperNode of %s exists", bound)
		default:
			out.Why = framework.Reasonf("TopologyConstraint", "none of the %d HyperNodes of %s has %s free for %s", roomless, bound, need, who.gang)
		}
	}
	return out
}

// restrict is d with only the allowed nodes.
func restrict(d *framework.Domain, allowed map[string]bool) *framework.Domain {
	out := &framework.Domain{Name: d.Name, Tier: d.Tier}
	for _, n := range d.Nodes {
		if allowed[n.Name] {
			out.Nodes = append(out.Nodes, n)
		}
	}
	return out
}

// singleNodes is highestTierAllowed 0: the pods share one node.
func (p *Plugin) singleNodes(placed []string, need *api.Resource, allowed map[string]bool, hard, evicting bool, who subject) *framework.Domains {
	out := &framework.Domains{Hard: hard}
	for _, n := range p.ssn.Snapshot.NodeList {
		if len(placed) > 1 || (len(placed) == 1 && placed[0] != n.Name) {
			continue
		}
		if allowed != nil && !allowed[n.Name] {
			continue
		}
		if evicting || need.LessEqual(n.FutureIdle()) {
			out.List = append(out.List, &framework.Domain{Name: n.Name, Nodes: []*api.NodeInfo{n}})
		}
	}
	if len(out.List) == 0 && hard {
		whole := "the whole job"
		if who != jobSubject {
			whole = "the whole " + who.gang
		}
		out.Why = framework.Reasonf("TopologyConstraint", "no single node has %s free for %s (highestTierAllowed 0)", need, whole)
	}
	return out
}

func (p *Plugin) tierNames() string {
	names := slices.Sorted(maps.Keys(p.tree.TierNames))
	if len(names) == 0 {
		return "none named"
	}
	return strings.Join(names, ", ")
}

// placedNodes are the nodes the tasks hold or claim, sorted.
func placedNodes(tasks map[api.TaskID]*api.TaskInfo) []string {
	var out []string
	for _, t := range tasks {
		switch t.Status {
		case api.Allocated, api.Pipelined, api.Binding, api.Bound, api.Running:
			out = append(out, t.NodeName)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func containsAll(h *topology.HyperNode, nodes []string) bool {
	for _, n := range nodes {
		if !h.Contains(n) {
			return false
		}
	}
	return true
}

// stillNeeded is what the job's pending tasks ask for until it has its
// gang (at least one task's worth), in task order.
func stillNeeded(ssn *framework.Session, job *api.JobInfo) *api.Resource {
	tasks := make([]*api.TaskInfo, 0, int(job.CountIn(api.Pending)))
	for t := range job.TasksIn(api.Pending) {
		if !t.BestEffort {
			tasks = append(tasks, t)
		}
	}
	ssn.SortTasks(tasks)
	n := max(1, int(job.MinAvailable-job.PlacedCount()))
	need := &api.Resource{}
	for i, t := range tasks {
		if i == n {
			break
		}
		need.Add(t.Resreq)
	}
	return need
}

// futureIdle is what a domain's nodes will have free.
func futureIdle(d *framework.Domain) *api.Resource {
	r := &api.Resource{}
	for _, n := range d.Nodes {
		r.Add(n.Idle).Add(n.Releasing).Sub(n.Pipelined)
	}
	return r
}

// ScoreNodes scores nodes under fuller HyperNodes higher, for pods whose
// job has no network topology constraint.
func (p *Plugin) ScoreNodes(t *api.TaskInfo, nodes []*api.NodeInfo, scores []float64) {
	if !p.scores(t) {
		return
	}
	for i, n := range nodes {
		scores[i] += p.nodeScore[n.Name]
	}
}

// maxDepth is the number of levels of the deepest HyperNode tree.
func maxDepth(tree *topology.Tree) int {
	depth := 0
	for _, h := range tree.List {
		d := 0
		for x := h; x != nil; x = x.Parent {
			d++
		}
		depth = max(depth, d)
	}
	return depth
}

// scores reports whether the plugin scores nodes for the task.
func (p *Plugin) scores(t *api.TaskInfo) bool {
	if p.nodeScore == nil {
		return false
	}
	job := p.ssn.Snapshot.Jobs[t.Job]
	return job == nil || job.NetworkTopology == nil
}

// Signature: the score depends on the node alone (the HyperNodes' fill as
// the cycle opened) and on whether the task's job has a constraint.
func (p *Plugin) Signature(t *api.TaskInfo) (string, bool) {
	if p.scores(t) {
		return "packed", true
	}
	return "", true
}

// KeepScores keeps the node-local scores.
func (p *Plugin) KeepScores(t *api.TaskInfo, nodes []*api.NodeInfo) (framework.KeptScores, error) {
	return framework.NodeLocalScores(p, t, nodes), nil
}
