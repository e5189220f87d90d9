// Package deviceshare places pods on a node's individual GPU cards: a pod
// asking for volcano.sh/gpu-memory gets a share of one card with that much
// memory free, a pod asking for volcano.sh/gpu-number gets that many idle
// cards, and the chosen cards go into the pod's volcano.sh/gpu-index
// annotation as it is bound. Nodes and cards are chosen by a policy:
// binpack, spread, or fragmentation gradient descent (fgd).
package deviceshare

import (
	"slices"

	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/pluginargs"
)

// Name is the plugin's name in the configuration.
const Name = "deviceshare"

// MaxNodeScore is the best score a node gets.
const MaxNodeScore = 100

// Plugin is the deviceshare plugin.
type Plugin struct {
	sharing, number, vgpu bool
	policy                string
	weight                float64
	// workload is the cluster's typical tasks in this cycle (fgd only);
	// scratch and picks are fgd's reused buffers.
	workload Workload
	scratch  NodeState
	picks    []int
}

var (
	_ framework.PredicatePlugin       = &Plugin{}
	_ framework.VictimPredicatePlugin = &Plugin{}
	_ framework.ReservePlugin         = &Plugin{}
	_ framework.NodeScorePlugin       = &Plugin{}
	_ framework.ScoreKeeperPlugin     = &Plugin{}
	_ framework.SignerPlugin          = &Plugin{}
	_ framework.SessionPlugin         = &Plugin{}
)

// New builds the plugin from *DeviceShareArgs (nil means the defaults).
func New(args any, _ *framework.Handle) (framework.Plugin, error) {
	a, err := pluginargs.Typed[configv1alpha1.DeviceShareArgs](Name, args)
	if err != nil {
		return nil, err
	}
	return &Plugin{sharing: *a.GPUSharing, number: *a.GPUNumber, vgpu: *a.VGPU, policy: *a.SchedulePolicy, weight: float64(*a.Weight)}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen takes the cluster's typical tasks for fgd: the shapes of
// the live tasks of the snapshot, those waiting and those placed.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	if p.policy != configv1alpha1.DeviceSharePolicyFGD {
		return
	}
	counts := map[Shape]int{}
	for _, j := range ssn.Snapshot.Jobs {
		for _, t := range j.Tasks {
			if t.Status.Live() {
				counts[shapeOf(t)]++
			}
		}
	}
	p.workload = NewWorkload(counts)
}

// OnSessionClose drops the cycle's workload.
func (p *Plugin) OnSessionClose(*framework.Session) { p.workload = nil }

func shapeOf(t *api.TaskInfo) Shape {
	return Shape{MilliCPU: t.Resreq.MilliCPU, Memory: t.Resreq.Memory, GPU: t.GPU}
}

// request is what the plugin places of a task's request: nothing for a
// kind of request the configuration leaves to the pooled resource check.
func (p *Plugin) request(t *api.TaskInfo) api.GPURequest {
	r := t.GPU
	if !p.sharing {
		r.Memory = 0
	}
	if !p.number {
		r.Cards = 0
	}
	return r
}

// Predicate implements framework.PredicatePlugin.
func (p *Plugin) Predicate(t *api.TaskInfo, n *api.NodeInfo) *framework.Status {
	if _, st := p.vgpuFit(t, n.VGPUs); st != nil {
		return st
	}
	req := p.request(t)
	if !req.Any() {
		return nil
	}
	return fit(req, n.GPUs)
}

// PredicateWithout implements framework.VictimPredicatePlugin: the victims'
// cards count as free.
func (p *Plugin) PredicateWithout(t *api.TaskInfo, n *api.NodeInfo, victims []*api.TaskInfo) *framework.Status {
	if p.vgpu && t.VGPU != nil {
		if _, st := p.vgpuFit(t, vgpuWithout(n, victims)); st != nil {
			return st
		}
	}
	req := p.request(t)
	if !req.Any() {
		return nil
	}
	cards := slices.Clone(n.GPUs)
	for _, v := range victims {
		api.HoldGPUs(cards, v, -1)
	}
	return fit(req, cards)
}

func fit(req api.GPURequest, cards []api.GPUDevice) *framework.Status {
	if c := req.Conflict(); c != "" {
		return &framework.Status{Plugin: Name, Reasons: []string{c}, Code: framework.UnschedulableAndUnresolvable}
	}
	if len(cards) == 0 {
		return &framework.Status{Plugin: Name, Reasons: []string{"node has no GPU cards (" + string(api.ResourceGPUNumber) + ")"}, Code: framework.UnschedulableAndUnresolvable}
	}
	if req.Cards > 0 {
		idle := 0
		for _, d := range cards {
			if d.Idle() {
				idle++
			}
		}
		if idle < req.Cards {
			return framework.NewStatus(Name, "Insufficient idle GPU cards")
		}
		return nil
	}
	for _, d := range cards {
		if d.Memory > 0 && d.Free() >= req.Memory {
			return nil
		}
	}
	return framework.NewStatus(Name, "Insufficient GPU memory on any one card")
}

// Reserve implements framework.ReservePlugin: the task takes the cards the
// policy chooses.
func (p *Plugin) Reserve(t *api.TaskInfo, n *api.NodeInfo) *framework.Status {
	devs, st := p.vgpuFit(t, n.VGPUs)
	if st != nil {
		return st
	}
	if devs != nil {
		t.VGPUDevices = devs
	}
	req := p.request(t)
	if !req.Any() {
		return nil
	}
	if st := fit(req, n.GPUs); st != nil {
		return st
	}
	if req.Cards > 0 {
		t.GPUIndex = idleCardsInto(make([]int, 0, req.Cards), n.GPUs, req.Cards)
		return nil
	}
	share, _ := p.choose(t, req, n)
	t.GPUIndex = []int{share}
	return nil
}

// Unreserve implements framework.ReservePlugin.
func (p *Plugin) Unreserve(t *api.TaskInfo, _ *api.NodeInfo) {
	if p.vgpu && t.VGPU != nil {
		t.VGPUDevices = nil
	}
	if p.request(t).Any() {
		t.GPUIndex = nil
	}
}

// ScoreNodes implements framework.NodeScorePlugin: each node's score for
// the cards the policy would choose there.
//
// Under fgd every task is scored, also one without GPUs: the CPU and
// memory it takes on a node with cards may leave those cards to no task,
// which is fragmentation too.
func (p *Plugin) ScoreNodes(t *api.TaskInfo, nodes []*api.NodeInfo, scores []float64) {
	req := p.request(t)
	if p.weight == 0 {
		return
	}
	if p.vgpu && t.VGPU != nil {
		for i, n := range nodes {
			if devs, st := p.vgpuFit(t, n.VGPUs); st == nil {
				scores[i] += p.weight * vgpu.Score(n.VGPUs, devs, p.policy)
			}
		}
		return
	}
	if !req.Any() {
		if p.policy != configv1alpha1.DeviceSharePolicyFGD || p.workload == nil {
			return
		}
		for i, n := range nodes {
			_, s := p.chooseFGD(t, req, n)
			scores[i] += p.weight * s
		}
		return
	}
	for i, n := range nodes {
		if fit(req, n.GPUs) != nil {
			continue
		}
		_, s := p.choose(t, req, n)
		scores[i] += p.weight * s
	}
}

// Signature implements framework.SignerPlugin: a node's verdict and score
// depend on the task's request, which the session's signature holds, and
// the node alone.
func (p *Plugin) Signature(t *api.TaskInfo) (string, bool) { return vgpuSignature(t), true }

// KeepScores implements framework.ScoreKeeperPlugin.
func (p *Plugin) KeepScores(t *api.TaskInfo, nodes []*api.NodeInfo) (framework.KeptScores, error) {
	return framework.NodeLocalScores(p, t, nodes), nil
}

// choose scores the node for a request that fits it, in [0,
// MaxNodeScore], and for a share picks its card (-1 for whole cards, which
// are the first idle ones).
func (p *Plugin) choose(t *api.TaskInfo, req api.GPURequest, n *api.NodeInfo) (int, float64) {
	if p.policy == configv1alpha1.DeviceSharePolicyFGD && p.workload != nil {
		return p.chooseFGD(t, req, n)
	}
	share := -1
	var cardFull, nodeFull float64
	if req.Cards > 0 {
		cardFull = 1
		nodeFull = nodeFullness(n.GPUs, req.Cards, 0)
	} else {
		for i, d := range n.GPUs {
			if d.Memory == 0 || d.Free() < req.Memory {
				continue
			}
			if share < 0 || p.better(d, n.GPUs[share]) {
				share = i
			}
		}
		d := n.GPUs[share]
		cardFull = float64(d.Used+req.Memory) / float64(d.Memory)
		nodeFull = nodeFullness(n.GPUs, 0, req.Memory)
	}
	if p.policy == configv1alpha1.DeviceSharePolicySpread {
		return share, (1 - nodeFull) * MaxNodeScore
	}
	// Packing: the fullest card first, then the fullest node.
	return share, ((1-nodeWeight)*cardFull + nodeWeight*nodeFull) * MaxNodeScore
}

// nodeWeight is the share of a node's fullness in binpack's score, beside
// the chosen card's: enough to prefer, among equally full cards, the node
// whose other cards are used.
const nodeWeight = 0.1

// nodeFullness is the share of the node's healthy card memory that would be
// held once whole cards are taken, or a share of one card.
func nodeFullness(devs []api.GPUDevice, wholeCards int, share int64) float64 {
	var total, used, per float64
	for _, d := range devs {
		total += float64(d.Memory)
		used += float64(d.Used)
		if d.Memory > 0 {
			per = float64(d.Memory)
		}
	}
	if total == 0 {
		return 0
	}
	return (used + float64(wholeCards)*per + float64(share)) / total
}

// better reports whether card a suits a share better than card b: the
// fullest for binpack (and fgd without a workload), the emptiest for
// spread; the first of equals.
func (p *Plugin) better(a, b api.GPUDevice) bool {
	fa := float64(a.Free()) / float64(a.Memory)
	fb := float64(b.Free()) / float64(b.Memory)
	if p.policy == configv1alpha1.DeviceSharePolicySpread {
		return fa > fb
	}
	return fa < fb
}

// chooseFGD places the task where the node's fragmentation for the
// workload grows least (falls most): for a share, the card that does so
// best; whole cards are alike. The score is the sigmoid of the fall, in
// cards.
func (p *Plugin) chooseFGD(t *api.TaskInfo, req api.GPURequest, n *api.NodeInfo) (int, float64) {
	shape := Shape{MilliCPU: t.Resreq.MilliCPU, Memory: t.Resreq.Memory, GPU: req}
	p.scratch.Read(n)
	f0 := p.scratch.Fragmentation(p.workload)
	share := -1
	var delta float64
	switch {
	case req.Cards > 0:
		delta = f0 - p.scratch.FragmentationAfter(p.workload, shape, idleCardsInto(p.picks[:0], n.GPUs, req.Cards))
	case req.Memory > 0:
		for i, d := range n.GPUs {
			if d.Memory == 0 || d.Free() < req.Memory {
				continue
			}
			p.picks = append(p.picks[:0], i)
			if dd := f0 - p.scratch.FragmentationAfter(p.workload, shape, p.picks); share < 0 || dd > delta {
				share, delta = i, dd
			}
		}
	default:
		delta = f0 - p.scratch.FragmentationAfter(p.workload, shape, nil)
	}
	return share, sigmoid(delta) * MaxNodeScore
}

// idleCardsInto appends the first count idle cards to dst: idle cards are
// alike.
func idleCardsInto(dst []int, devs []api.GPUDevice, count int) []int {
	for i, d := range devs {
		if len(dst) < count && d.Idle() {
			dst = append(dst, i)
		}
	}
	return dst
}
