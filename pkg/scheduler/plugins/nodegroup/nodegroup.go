// Package nodegroup confines each queue's pods to node groups: nodes carry
// a group in the label volcano.sh/nodegroup-name, and a queue's
// spec.affinity names the groups its pods may, should and must not use.
//
// A pod may run on a node whose group its queue names in
// nodeGroupAffinity (required or preferred) or, as a last resort, in
// nodeGroupAntiAffinity.preferred, and never on a group in
// nodeGroupAntiAffinity.required; anti-affinity wins where the lists
// overlap. Node groups are reserved: a queue that names none of a node's
// group does not run there. Nodes without a group take pods only of queues
// without node-group affinity, and only when the plugin is not strict.
//
// Nodes score by how much the queue wants their group: a required group
// MaxNodeScore, a preferred group half that more (scaled by position in the
// list with enablePreferredOrder), an anti-preferred group -1, so that
// pods fill wanted groups first.
//
// With enableHierarchy a queue without node-group affinity uses that of
// its nearest ancestor that has some.
package nodegroup

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "nodegroup"

// LabelKey is the node label that names a node's group.
const LabelKey = "volcano.sh/nodegroup-name"

// MaxNodeScore is the score of a node in a required group.
const MaxNodeScore = 100

// preferredScore is the most a preferred group adds to a node's score.
const preferredScore = MaxNodeScore / 2

// antiPreferredScore is the score of a node in an anti-preferred group.
const antiPreferredScore = -1

// Options are the plugin's arguments together with its enableHierarchy
// switch (the handle's Hierarchy).
type Options struct {
	Args      *configv1alpha1.NodeGroupArgs
	Hierarchy bool
}

// Plugin is the nodegroup plugin.
type Plugin struct {
	strict    bool
	ordered   bool
	hierarchy bool

	jobs map[api.JobID]*api.JobInfo
	// rules holds the node-group rules of each queue with some, its own or
	// (with hierarchy) inherited.
	rules map[api.QueueID]*rules
}

// rules are the node-group rules that apply to a queue's pods.
type rules struct {
	queue api.QueueID
	// from is the queue whose spec.affinity they are: queue itself, or an
	// ancestor.
	from          api.QueueID
	required      []string
	preferred     []string
	antiRequired  []string
	antiPreferred []string
}

var (
	_ framework.SessionPlugin     = &Plugin{}
	_ framework.PredicatePlugin   = &Plugin{}
	_ framework.NodeScorePlugin   = &Plugin{}
	_ framework.ScoreKeeperPlugin = &Plugin{}
	_ framework.SignerPlugin      = &Plugin{}
)

// New builds the plugin from *NodeGroupArgs (nil means the defaults); the
// handle's Hierarchy (the enableHierarchy switch) makes queues inherit
// their ancestors' affinity.
func New(args any, h *framework.Handle) (framework.Plugin, error) {
	var o Options
	switch v := args.(type) {
	case nil:
	case *configv1alpha1.NodeGroupArgs:
		o.Args = v
	default:
		return nil, fmt.Errorf("plugin %s: arguments of type %T, want *NodeGroupArgs", Name, args)
	}
	o.Hierarchy = h != nil && h.Hierarchy
	a := &configv1alpha1.NodeGroupArgs{}
	if o.Args != nil {
		a = o.Args.DeepCopy()
	}
	a.Default()
	if errs := a.Validate(field.NewPath("args")); len(errs) > 0 {
		return nil, fmt.Errorf("plugin %s: %w", Name, errs.ToAggregate())
	}
	return &Plugin{strict: *a.Strict, ordered: *a.EnablePreferredOrder, hierarchy: o.Hierarchy}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// Hierarchical reports whether queues inherit their ancestors' affinity.
func (p *Plugin) Hierarchical() bool { return p.hierarchy }

// Strict reports whether queues without node-group affinity run nowhere.
func (p *Plugin) Strict() bool { return p.strict }

// OnSessionOpen works out every queue's rules.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	p.jobs = ssn.Snapshot.Jobs
	p.rules = rulesOf(ssn.Snapshot.Queues, p.hierarchy)
}

// OnSessionClose drops the cycle's state.
func (p *Plugin) OnSessionClose(*framework.Session) {
	p.jobs, p.rules = nil, nil
}

// rulesOf returns the node-group rules of every queue that has some. With
// hierarchy, a queue without node-group affinity takes its nearest
// ancestor's.
func rulesOf(queues map[api.QueueID]*api.QueueInfo, hierarchy bool) map[api.QueueID]*rules {
	out := map[api.QueueID]*rules{}
	for id, q := range queues {
		from := q
		if hierarchy {
			seen := map[api.QueueID]bool{}
			for from != nil && !hasAffinity(from) && !seen[from.UID] && from.Parent != "" {
				seen[from.UID] = true
				from = queues[from.Parent]
			}
		}
		if from == nil || !hasAffinity(from) {
			continue
		}
		r := &rules{queue: id, from: from.UID}
		aff := from.Queue.Spec.Affinity
		if a := aff.NodeGroupAffinity; a != nil {
			r.required = a.RequiredDuringSchedulingIgnoredDuringExecution
			r.preferred = a.PreferredDuringSchedulingIgnoredDuringExecution
		}
		if a := aff.NodeGroupAntiAffinity; a != nil {
			r.antiRequired = a.RequiredDuringSchedulingIgnoredDuringExecution
			r.antiPreferred = a.PreferredDuringSchedulingIgnoredDuringExecution
		}
		out[id] = r
	}
	return out
}

func hasAffinity(q *api.QueueInfo) bool {
	if q.Queue == nil || q.Queue.Spec.Affinity == nil {
		return false
	}
	a := q.Queue.Spec.Affinity
	return a.NodeGroupAffinity != nil || a.NodeGroupAntiAffinity != nil
}

// queueOf is the queue of the task's job; "" when the job is unknown.
func (p *Plugin) queueOf(t *api.TaskInfo) api.QueueID {
	if j := p.jobs[t.Job]; j != nil {
		return j.Queue
	}
	return ""
}

// Predicate implements framework.PredicatePlugin.
func (p *Plugin) Predicate(t *api.TaskInfo, n *api.NodeInfo) *framework.Status {
	q := p.queueOf(t)
	if q == "" || n.Node == nil {
		return nil
	}
	reason := p.check(q, n.Node.Labels[LabelKey])
	if reason == "" {
		return nil
	}
	// Removing pods does not move a node into another group.
	return &framework.Status{Plugin: Name, Reasons: []string{reason}, Code: framework.UnschedulableAndUnresolvable}
}

// check returns why a pod of queue q may not run on a node of group, or "".
// The phrases follow a node count ("3 nodes in node group ...").
func (p *Plugin) check(q api.QueueID, group string) string {
	r := p.rules[q]
	if r == nil {
		switch {
		case group != "":
			return fmt.Sprintf("in node group %q, and queue %q has no node-group affinity", group, q)
		case p.strict:
			return fmt.Sprintf("without a node group, and queue %q has no node-group affinity (the nodegroup plugin is strict)", q)
		}
		return ""
	}
	switch {
	case group == "":
		return fmt.Sprintf("without a node group (label %s), and %s has node-group affinity", LabelKey, r.owner())
	case slices.Contains(r.antiRequired, group):
		return fmt.Sprintf("in node group %q, which %s must avoid (nodeGroupAntiAffinity)", group, r.owner())
	case slices.Contains(r.required, group), slices.Contains(r.preferred, group), slices.Contains(r.antiPreferred, group):
		return ""
	}
	return fmt.Sprintf("in node group %q, which %s does not name in its node-group affinity", group, r.owner())
}

// owner names the queue, and the ancestor whose affinity it inherits, for
// messages.
func (r *rules) owner() string {
	if r.from == r.queue {
		return fmt.Sprintf("queue %q", r.queue)
	}
	return fmt.Sprintf("queue %q (with the affinity of queue %q)", r.queue, r.from)
}

// ScoreNodes implements framework.NodeScorePlugin.
func (p *Plugin) ScoreNodes(t *api.TaskInfo, nodes []*api.NodeInfo, scores []float64) {
	r := p.rules[p.queueOf(t)]
	if r == nil {
		return
	}
	for i, n := range nodes {
		if n.Node != nil {
			scores[i] += p.score(r, n.Node.Labels[LabelKey])
		}
	}
}

// score is how much the rules want group.
func (p *Plugin) score(r *rules, group string) float64 {
	if group == "" {
		return 0
	}
	if slices.Contains(r.antiPreferred, group) {
		return antiPreferredScore
	}
	var s float64
	if slices.Contains(r.required, group) {
		s += MaxNodeScore
	}
	if i := slices.Index(r.preferred, group); i >= 0 {
		if p.ordered {
			n := len(r.preferred)
			s += float64(preferredScore) * float64(n-i) / float64(n)
		} else {
			s += preferredScore
		}
	}
	return s
}

// Signature: verdicts and scores depend on the task's queue alone.
func (p *Plugin) Signature(t *api.TaskInfo) (string, bool) {
	return string(p.queueOf(t)), true
}

// KeepScores keeps the nodes' scores; each depends on its node alone.
func (p *Plugin) KeepScores(t *api.TaskInfo, nodes []*api.NodeInfo) (framework.KeptScores, error) {
	return framework.NodeLocalScores(p, t, nodes), nil
}
