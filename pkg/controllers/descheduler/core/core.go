// Package core decides what the load-aware descheduler evicts, as a pure
// function of the nodes' measured use, their pods and the disruption
// budgets: from each node running hot (fresh usage above the high
// watermark in CPU or memory), the cheapest movable pods, until the node's
// hot resources fall to the low watermark, each only when another node has
// room for it below the high watermark, within a per-run and a per-node
// cap. It imports no client; the controller applies the decision.
//
// The decision holds nothing from one run to the next: a pod already being
// deleted counts as leaving its node, so deciding again after a restart
// does not evict twice for the same heat.
package core

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/loadaware"
)

// Amounts are CPU in milli-CPUs and memory in bytes.
type Amounts struct {
	CPU, Memory int64
}

// Plus is a + b.
func (a Amounts) Plus(b Amounts) Amounts { return Amounts{a.CPU + b.CPU, a.Memory + b.Memory} }

func (a Amounts) minus(b Amounts) Amounts { return Amounts{a.CPU - b.CPU, a.Memory - b.Memory} }

// AmountsOf reads the CPU and memory of a resource list.
func AmountsOf(rl corev1.ResourceList) Amounts {
	return Amounts{CPU: rl.Cpu().MilliValue(), Memory: rl.Memory().Value()}
}

// Percentages are a share of each resource, in percent.
type Percentages struct {
	CPU, Memory float64
}

// Config is the descheduler's policy.
type Config struct {
	// High is the usage above which a node is hot; Low the usage its hot
	// resources are brought down to.
	High, Low Percentages
	// MaxPerRun and MaxPerNode cap the evictions of one run, in all and
	// from one node.
	MaxPerRun, MaxPerNode int
	// StaleAfter is the age past which a node's usage is not trusted: the
	// node is neither hot nor a destination.
	StaleAfter time.Duration
}

// Node is a node as the descheduler sees it.
type Node struct {
	Name        string
	Allocatable Amounts
	// Requested is the sum of the requests of the pods on the node.
	Requested Amounts
	// Usage is the node's measurement; nil when it has none.
	Usage *loadaware.Usage
	// Closed: the node takes no new pods (cordoned, or not ready), so it
	// is no destination.
	Closed bool
	Pods   []Pod
}

// Pod is a pod on a node.
type Pod struct {
	// Key is namespace/name.
	Key string
	UID string
	// Priority is the pod's priority; lower is evicted first.
	Priority int32
	Request  Amounts
	// Usage is the pod's measured average; for a pod not measured yet, its
	// request.
	Usage Amounts
	// Leaving: the pod is being deleted, or is gone and still in the
	// node's measurement; its usage is leaving the node.
	Leaving bool
	// Unmeasured: the node's measurement does not hold the pod yet (it
	// started after the window began); its usage, its request, is added
	// to the node's.
	Unmeasured bool
	// Unmovable says why the pod may not be evicted ("" when it may).
	Unmovable string
	// Budgets are the disruption budgets that select the pod.
	Budgets []string
}

// Input is what one run decides on.
type Input struct {
	Now   time.Time
	Nodes []Node
	// Allowed is each disruption budget's disruptionsAllowed.
	Allowed map[string]int32
	Config  Config
}

// Eviction is one pod to evict.
type Eviction struct {
	Pod, UID, Node string
	// To is the node whose room the eviction counted on; the scheduler
	// is free to place the pod elsewhere.
	To     string
	Reason string
}

// State is what a run made of a node.
type State string

// Node states.
const (
	// Hot: fresh usage above the high watermark.
	Hot State = "Hot"
	// Room: fresh usage under the high watermark, open: it may take
	// evicted pods.
	Room State = "Room"
	// Closed: fresh usage, not hot, but it takes no new pods.
	ClosedNode State = "Closed"
	// Unmeasured: no fresh usage; neither hot nor a destination.
	Unmeasured State = "Unmeasured"
)

// Verdict is what a run made of one node, and why.
type Verdict struct {
	Node    string
	State   State
	Message string
}

// Decision is one run's evictions and its verdict on every node.
type Decision struct {
	Evictions []Eviction
	Nodes     []Verdict
}

// node is a node's state during the run.
type node struct {
	*Node
	// usage is the projected usage: measured, less what is leaving, plus
	// what the run sent its way.
	usage     Amounts
	requested Amounts
	fresh     bool
}

func (n *node) pct() Percentages {
	return Percentages{
		CPU:    loadaware.Percent(float64(n.usage.CPU), float64(n.Allocatable.CPU)),
		Memory: loadaware.Percent(float64(n.usage.Memory), float64(n.Allocatable.Memory)),
	}
}

// Decide decides one run.
func Decide(in Input) Decision {
	cfg := in.Config
	nodes := make([]*node, len(in.Nodes))
	for i := range in.Nodes {
		n := &node{Node: &in.Nodes[i], requested: in.Nodes[i].Requested}
		if u := n.Usage; u.Fresh(in.Now, cfg.StaleAfter) {
			n.fresh = true
			n.usage = Amounts{u.CPU, u.Memory}
			for _, p := range n.Pods {
				switch {
				case p.Leaving:
					n.usage = n.usage.minus(p.Usage)
				case p.Unmeasured:
					n.usage = n.usage.Plus(p.Usage)
				}
			}
			n.usage = Amounts{max(0, n.usage.CPU), max(0, n.usage.Memory)}
		}
		nodes[i] = n
	}
	slices.SortFunc(nodes, func(a, b *node) int { return strings.Compare(a.Name, b.Name) })

	var hot, room []*node
	verdicts := map[string]Verdict{}
	for _, n := range nodes {
		switch pct := n.pct(); {
		case !n.fresh:
			verdicts[n.Name] = Verdict{n.Name, Unmeasured, unmeasured(n, in.Now)}
		case over(pct, cfg.High):
			hot = append(hot, n)
		case n.Closed:
			verdicts[n.Name] = Verdict{n.Name, ClosedNode, fmt.Sprintf("usage %s; takes no new pods", describe(pct))}
		default:
			room = append(room, n)
		}
	}
	// The hottest first: the run's cap goes where it matters most.
	slices.SortStableFunc(hot, func(a, b *node) int { return cmp.Compare(heat(b.pct(), cfg.High), heat(a.pct(), cfg.High)) })

	allowed := map[string]int32{}
	for k, v := range in.Allowed {
		allowed[k] = v
	}
	var evictions []Eviction
	for _, n := range hot {
		before := n.pct()
		res := hotResources(before, cfg.High)
		evicted, skipped := 0, map[string]int{}
		for _, p := range candidates(n.Pods, res) {
			if !above(n.pct(), cfg.Low, res) {
				break
			}
			if len(evictions) >= cfg.MaxPerRun {
				skipped["the run's cap reached"]++
				break
			}
			if evicted >= cfg.MaxPerNode {
				skipped["the node's cap reached"]++
				break
			}
			if p.Unmovable != "" {
				skipped[p.Unmovable]++
				continue
			}
			if b, ok := exhausted(p, allowed); ok {
				skipped["disruption budget "+b+" allows no more"]++
				continue
			}
			to := destination(room, p, cfg.High)
			if to == nil {
				skipped["no other node has room below the high watermark"]++
				continue
			}
			for _, b := range p.Budgets {
				allowed[b]--
			}
			to.usage = to.usage.Plus(p.Usage)
			to.requested = to.requested.Plus(p.Request)
			n.usage = n.usage.minus(p.Usage)
			evicted++
			evictions = append(evictions, Eviction{Pod: p.Key, UID: p.UID, Node: n.Name, To: to.Name,
				Reason: fmt.Sprintf("node %s usage %s is above the high watermark %s: moving pods off it until %s is at or under the low watermark %s",
					n.Name, describe(before), describe(cfg.High), strings.Join(res, " and "), describe(cfg.Low))})
		}
		msg := fmt.Sprintf("usage %s above the high watermark %s; %d evicted, usage now estimated %s", describe(before), describe(cfg.High), evicted, describe(n.pct()))
		if above(n.pct(), cfg.Low, res) && len(skipped) > 0 {
			msg += "; not lower because: " + reasons(skipped)
		}
		verdicts[n.Name] = Verdict{n.Name, Hot, msg}
	}
	for _, n := range room {
		verdicts[n.Name] = Verdict{n.Name, Room, fmt.Sprintf("usage %s, under the high watermark", describe(n.pct()))}
	}
	d := Decision{Evictions: evictions}
	for _, n := range nodes {
		d.Nodes = append(d.Nodes, verdicts[n.Name])
	}
	return d
}

func unmeasured(n *node, now time.Time) string {
	if n.Usage == nil {
		return "no NodeUsage"
	}
	return fmt.Sprintf("usage measured %s ago, too old to act on", now.Sub(n.Usage.At).Round(time.Second))
}

// over reports whether either resource is above its watermark.
func over(p, w Percentages) bool { return p.CPU > w.CPU || p.Memory > w.Memory }

// heat is how far above the high watermark a node is, at most.
func heat(p, high Percentages) float64 { return max(p.CPU-high.CPU, p.Memory-high.Memory) }

// hotResources are the resources above their high watermark.
func hotResources(p, high Percentages) []string {
	var res []string
	if p.CPU > high.CPU {
		res = append(res, "cpu")
	}
	if p.Memory > high.Memory {
		res = append(res, "memory")
	}
	return res
}

// above reports whether any of the resources is above its watermark.
func above(p, w Percentages, res []string) bool {
	for _, r := range res {
		if (r == "cpu" && p.CPU > w.CPU) || (r == "memory" && p.Memory > w.Memory) {
			return true
		}
	}
	return false
}

// candidates are the node's pods that are not leaving, cheapest first:
// lowest priority, then the largest use of the hot resources (fewer
// evictions relieve the node), then by name. Pods that use none of the
// hot resources would relieve nothing and are left out.
func candidates(pods []Pod, res []string) []Pod {
	use := func(p Pod) int64 {
		var u int64
		for _, r := range res {
			if r == "cpu" {
				u += p.Usage.CPU
			} else {
				u += p.Usage.Memory
			}
		}
		return u
	}
	var out []Pod
	for _, p := range pods {
		if !p.Leaving && use(p) > 0 {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b Pod) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(use(b), use(a)), strings.Compare(a.Key, b.Key))
	})
	return out
}

// exhausted names a budget of the pod that allows no more disruptions.
func exhausted(p Pod, allowed map[string]int32) (string, bool) {
	for _, b := range p.Budgets {
		if allowed[b] <= 0 {
			return b, true
		}
	}
	return "", false
}

// destination is the least used node with room for the pod: its requests
// fit, and its usage with the pod's stays at or under the high watermark.
func destination(room []*node, p Pod, high Percentages) *node {
	var best *node
	var bestHeat float64
	for _, n := range room {
		free := n.Allocatable.minus(n.requested)
		if p.Request.CPU > free.CPU || p.Request.Memory > free.Memory {
			continue
		}
		after := &node{Node: n.Node, usage: n.usage.Plus(p.Usage)}
		pct := after.pct()
		if over(pct, high) {
			continue
		}
		if h := max(pct.CPU, pct.Memory); best == nil || h < bestHeat {
			best, bestHeat = n, h
		}
	}
	return best
}

func describe(p Percentages) string {
	return fmt.Sprintf("cpu %.0f%% memory %.0f%%", p.CPU, p.Memory)
}

// reasons joins counted reasons, most frequent first.
func reasons(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d)", k, counts[k])
	}
	return strings.Join(parts, ", ")
}
