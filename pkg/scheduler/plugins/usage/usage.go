// Package usage places pods by what nodes really use, as caldera-agent
// measures it (NodeUsage): it keeps new pods off nodes whose usage is above
// a threshold and scores nodes by their usage once the pod is added.
//
// A node's estimated usage is its measured average plus the requests of
// the pods the measurement cannot hold yet: those placed on the node that
// had not started when the measurement's window began (not started, started
// later, or placed in this cycle). A pod that started mid-window counts both
// ways: the estimate errs high. A node whose usage is missing or older than
// staleAfter is not filtered, and is scored by its requests instead.
package usage

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/loadaware"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/pluginargs"
)

// Name is the plugin's name in the configuration.
const Name = "usage"

// MaxNodeScore is the score of an idle node, before the weight.
const MaxNodeScore = 100

// Plugin is the usage plugin.
type Plugin struct {
	weight, cpuWeight, memWeight float64
	cpuThreshold, memThreshold   float64
	staleAfter                   time.Duration

	// nodes is each node's estimated usage in this session, for the nodes
	// whose measurement is fresh.
	nodes map[string]*estimate
	// fallback is how many nodes were without fresh usage at the last
	// session's start; reported when it changes.
	fallback int
	// bases are the nodes' estimates at the last session's start; seen
	// counts the sessions.
	bases map[string]*base
	seen  uint64
}

// estimate is a node's estimated usage: CPU in milli-CPUs, memory in
// bytes.
type estimate struct {
	cpu, mem float64
}

var (
	_ framework.SessionPlugin      = &Plugin{}
	_ framework.PredicatePlugin    = &Plugin{}
	_ framework.NodeScorePlugin    = &Plugin{}
	_ framework.ScoreKeeperPlugin  = &Plugin{}
	_ framework.SignerPlugin       = &Plugin{}
	_ framework.EventHandlerPlugin = &Plugin{}
)

// New builds the plugin from *UsageArgs (nil means the defaults).
func New(args any, _ *framework.Handle) (framework.Plugin, error) {
	a, err := pluginargs.Typed[configv1alpha1.UsageArgs](Name, args)
	if err != nil {
		return nil, err
	}
	return &Plugin{
		weight: float64(*a.Weight), cpuWeight: float64(*a.CPUWeight), memWeight: float64(*a.MemoryWeight),
		cpuThreshold: *a.Thresholds.CPU, memThreshold: *a.Thresholds.Memory,
		staleAfter: a.StaleAfter.Duration, fallback: -1,
	}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen estimates the usage of every node whose measurement is
// fresh. A node whose tasks and measurement are those of the last
// session keeps the last session's starting estimate.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	usage := ssn.Snapshot.Usage
	if p.bases == nil {
		p.bases = map[string]*base{}
	}
	p.nodes = make(map[string]*estimate, len(usage))
	fallback := 0
	p.seen++
	for _, n := range ssn.Snapshot.NodeList {
		u := usage[n.Name]
		if !u.Fresh(ssn.Now, p.staleAfter) {
			fallback++
			continue
		}
		b := p.bases[n.Name]
		if b == nil {
			b = &base{}
			p.bases[n.Name] = b
		}
		if b.usage != u || b.node != n.Node || b.version != n.Version {
			*b = base{usage: u, node: n.Node, version: n.Version, cpu: float64(u.CPU), mem: float64(u.Memory)}
			for _, t := range n.Tasks {
				if t.Status.HoldsResources() && (t.Pod == nil || !u.Holds(t.Pod.Status.StartTime)) {
					b.cpu += float64(t.Resreq.MilliCPU)
					b.mem += float64(t.Resreq.Memory)
				}
			}
		}
		b.seen = p.seen
		p.nodes[n.Name] = &estimate{cpu: b.cpu, mem: b.mem}
	}
	for name, b := range p.bases {
		if b.seen != p.seen {
			delete(p.bases, name)
		}
	}
	if fallback != p.fallback {
		ssn.Logger.Info("Nodes without fresh usage: not filtered, scored by their requests",
			"plugin", Name, "nodes", fallback, "of", len(ssn.Snapshot.NodeList), "staleAfter", p.staleAfter)
		p.fallback = fallback
	}
}

// base is a node's estimated usage at a session's start, and what it was
// computed from.
type base struct {
	usage    *loadaware.Usage
	node     *corev1.Node
	version  uint64
	cpu, mem float64
	// seen is the session that last saw the node.
	seen uint64
}

// OnSessionClose forgets the session's estimates.
func (p *Plugin) OnSessionClose(*framework.Session) { p.nodes = nil }

// OnAllocate adds a task placed in the session to its node's estimate.
func (p *Plugin) OnAllocate(t *api.TaskInfo) { p.add(t, 1) }

// OnDeallocate takes back a placement undone in the session.
func (p *Plugin) OnDeallocate(t *api.TaskInfo) { p.add(t, -1) }

func (p *Plugin) add(t *api.TaskInfo, sign float64) {
	if e := p.nodes[t.NodeName]; e != nil {
		e.cpu += sign * float64(t.Resreq.MilliCPU)
		e.mem += sign * float64(t.Resreq.Memory)
	}
}

// Predicate keeps new pods off a node whose estimated usage is above a
// threshold. Evicting pods does not lower a measurement at once: the
// rejection is unresolvable.
func (p *Plugin) Predicate(_ *api.TaskInfo, n *api.NodeInfo) *framework.Status {
	e := p.nodes[n.Name]
	if e == nil {
		return nil
	}
	if pct := loadaware.Percent(e.cpu, float64(n.Allocatable.MilliCPU)); pct > p.cpuThreshold {
		return p.reject("cpu", p.cpuThreshold)
	}
	if pct := loadaware.Percent(e.mem, float64(n.Allocatable.Memory)); pct > p.memThreshold {
		return p.reject("memory", p.memThreshold)
	}
	return nil
}

func (p *Plugin) reject(resource string, threshold float64) *framework.Status {
	return &framework.Status{Plugin: Name, Code: framework.UnschedulableAndUnresolvable,
		Reasons: []string{fmt.Sprintf("node %s usage above %s%%", resource, formatPercent(threshold))}}
}

func formatPercent(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", v)
}

// ScoreNodes adds each node's weighted idleness once the task is added:
// by its estimated usage, or by its requests when its usage is not fresh.
func (p *Plugin) ScoreNodes(t *api.TaskInfo, nodes []*api.NodeInfo, scores []float64) {
	if p.weight == 0 {
		return
	}
	for i, n := range nodes {
		scores[i] += p.weight * p.score(t, n)
	}
}

// score is in [0, MaxNodeScore]: the weighted mean of the CPU and memory
// left unused once the task is added.
func (p *Plugin) score(t *api.TaskInfo, n *api.NodeInfo) float64 {
	var cpu, mem float64
	if e := p.nodes[n.Name]; e != nil {
		cpu, mem = e.cpu, e.mem
	} else {
		cpu, mem = float64(n.Used.MilliCPU), float64(n.Used.Memory)
	}
	cpu += float64(t.Resreq.MilliCPU)
	mem += float64(t.Resreq.Memory)
	free := func(used, total float64) float64 {
		return min(1, max(0, 1-loadaware.Percent(used, total)/100))
	}
	sum := p.cpuWeight*free(cpu, float64(n.Allocatable.MilliCPU)) + p.memWeight*free(mem, float64(n.Allocatable.Memory))
	weights := p.cpuWeight + p.memWeight
	if weights == 0 {
		return 0
	}
	return sum / weights * MaxNodeScore
}

// Signature: the filter depends on the node alone and the score on the
// task's request, which the session's signature already holds.
func (p *Plugin) Signature(*api.TaskInfo) (string, bool) { return "", true }

// KeepScores keeps the nodes' scores; each depends on its node alone.
func (p *Plugin) KeepScores(t *api.TaskInfo, nodes []*api.NodeInfo) (framework.KeptScores, error) {
	return framework.NodeLocalScores(p, t, nodes), nil
}
