package framework

import (
	"context"
	"fmt"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// Plugin is a scheduling plugin. A plugin implements any of the extension
// point interfaces below; the session calls it at each point it implements
// and its tier configuration enables.
type Plugin interface {
	Name() string
}

// PluginFactory builds a plugin from its typed arguments (nil when the
// configuration gives none), validating them.
type PluginFactory func(args any, h *Handle) (Plugin, error)

// NoArgs is the factory of a plugin that takes no arguments: it refuses
// any, naming the plugin, and otherwise builds a fresh plugin.
func NoArgs(name string, build func() Plugin) PluginFactory {
	return func(args any, _ *Handle) (Plugin, error) {
		if args != nil {
			return nil, fmt.Errorf("plugin %s takes no arguments", name)
		}
		return build(), nil
	}
}

// Registry maps plugin names to factories. It is built by a function that
// returns a map literal, never by init-time registration.
type Registry map[string]PluginFactory

// SessionPlugin is told when a cycle opens and closes, to compute and drop
// its per-cycle state (shares, deserved amounts).
type SessionPlugin interface {
	Plugin
	OnSessionOpen(ssn *Session)
	OnSessionClose(ssn *Session)
}

// Vote is a plugin's answer where plugins vote.
type Vote int

// Votes.
const (
	Reject  Vote = -1
	Abstain Vote = 0
	Permit  Vote = 1
)

// QueueOrderPlugin orders queues: negative when l goes first, positive when
// r does, 0 for no opinion.
type QueueOrderPlugin interface {
	Plugin
	QueueOrder(l, r *api.QueueInfo) int
}

// JobOrderPlugin orders jobs within a queue, like QueueOrderPlugin.
type JobOrderPlugin interface {
	Plugin
	JobOrder(l, r *api.JobInfo) int
}

// NamespaceOrderPlugin orders namespaces within a queue.
type NamespaceOrderPlugin interface {
	Plugin
	NamespaceOrder(l, r string) int
}

// TaskOrderPlugin orders the tasks of a job.
type TaskOrderPlugin interface {
	Plugin
	TaskOrder(l, r *api.TaskInfo) int
}

// JobValidPlugin says whether a job can be scheduled at all (for example a
// gang with fewer pods than its minimum cannot); nil means valid.
type JobValidPlugin interface {
	Plugin
	JobValid(job *api.JobInfo) *Reason
}

// JobReadyPlugin says whether a job's placed tasks are enough to start it.
type JobReadyPlugin interface {
	Plugin
	JobReady(job *api.JobInfo) bool
}

// JobPipelinedPlugin votes on whether a job's placed and pipelined tasks
// are enough to hold its resources while others release theirs.
type JobPipelinedPlugin interface {
	Plugin
	JobPipelined(job *api.JobInfo) Vote
}

// JobStarvingPlugin says whether a job still wants more resources.
type JobStarvingPlugin interface {
	Plugin
	JobStarving(job *api.JobInfo) bool
}

// JobEnqueueablePlugin votes on admitting a Pending job to Inqueue. A
// rejection carries the reason.
type JobEnqueueablePlugin interface {
	Plugin
	JobEnqueueable(job *api.JobInfo) (Vote, *Reason)
}

// JobEnqueuedPlugin is told that a job was admitted, to account for it.
type JobEnqueuedPlugin interface {
	Plugin
	JobEnqueued(job *api.JobInfo)
}

// AllocatablePlugin says whether a queue may take one more task.
type AllocatablePlugin interface {
	Plugin
	Allocatable(queue *api.QueueInfo, task *api.TaskInfo) (bool, *Reason)
}

// OverusedPlugin says whether a queue has taken all it may for now.
type OverusedPlugin interface {
	Plugin
	Overused(queue *api.QueueInfo) bool
}

// PrePredicatePlugin prepares a task's node filtering (once per attempt to
// place the task) and may reject the task outright.
type PrePredicatePlugin interface {
	Plugin
	PrePredicate(task *api.TaskInfo) *Status
}

// PredicatePlugin says whether a task fits a node; nil means it fits.
type PredicatePlugin interface {
	Plugin
	Predicate(task *api.TaskInfo, node *api.NodeInfo) *Status
}

// VictimPredicatePlugin is a predicate plugin that can say whether a task
// would fit a node if some of the node's tasks were gone (preemption and
// reclaim ask before evicting). Predicate plugins without it are asked
// Predicate: their verdict must not depend on the node's other tasks.
type VictimPredicatePlugin interface {
	PredicatePlugin
	PredicateWithout(task *api.TaskInfo, node *api.NodeInfo, victims []*api.TaskInfo) *Status
}

// PreBindPlugin prepares a placed task's node before the binder binds it
// (binds its volumes, say), outside any cycle, from the binder's workers;
// Unreserve releases what the plugin kept for a task whose bind failed or
// was dropped. A PreBind error fails the bind.
type PreBindPlugin interface {
	Plugin
	PreBind(ctx context.Context, task *api.TaskInfo, node string) error
	Unreserve(ctx context.Context, task *api.TaskInfo)
}

// ReservePlugin chooses what a task takes on its node beyond the sums of
// resources (which GPU cards), as the task is placed there (not when it is
// pipelined: the choice is made once the room is free). Reserve runs after
// the predicates passed and may still refuse the node; Unreserve undoes
// the choice when the placement is undone. The choice is kept on the task
// and the node's accounts follow it.
type ReservePlugin interface {
	Plugin
	Reserve(task *api.TaskInfo, node *api.NodeInfo) *Status
	Unreserve(task *api.TaskInfo, node *api.NodeInfo)
}

// NodeScorePlugin adds its weighted scores for the candidate nodes of a
// task into scores (scores[i] belongs to nodes[i]).
type NodeScorePlugin interface {
	Plugin
	ScoreNodes(task *api.TaskInfo, nodes []*api.NodeInfo, scores []float64)
}

// SignerPlugin is a predicate or node-score plugin that can say when tasks
// are alike to it: tasks with equal signatures get equal results on a node
// in a given state, and placing one of them changes the results on no node
// but the one it went to. ok is false for a task with no such signature.
// When every predicate and node-score plugin signs a task, the session
// reuses the results of the last alike task (see Session.FindNode).
type SignerPlugin interface {
	Plugin
	Signature(task *api.TaskInfo) (sig string, ok bool)
}

// ScoreKeeperPlugin is a node-score plugin that can keep a task's scores
// over its candidate nodes, for the next tasks with the same signature.
type ScoreKeeperPlugin interface {
	NodeScorePlugin
	KeepScores(task *api.TaskInfo, nodes []*api.NodeInfo) (KeptScores, error)
}

// KeptScores are a plugin's scores of one task over a list of nodes.
type KeptScores interface {
	// Update rescores node i, which changed since it was scored.
	Update(i int, node *api.NodeInfo) error
	// Remove drops node i, keeping the order of the others.
	Remove(i int)
	// AddTo adds the weighted score of each kept node to scores.
	AddTo(scores []float64) error
}

// EventHandlerPlugin follows placements made and undone within a cycle, to
// keep its shares current.
type EventHandlerPlugin interface {
	Plugin
	OnAllocate(task *api.TaskInfo)
	OnDeallocate(task *api.TaskInfo)
}

// Action is a step of a cycle (enqueue, allocate, backfill, ...).
type Action interface {
	Name() string
	Execute(ssn *Session)
}

// PreemptablePlugin narrows the tasks a preemptor may evict, within its
// queue, to those this plugin allows.
type PreemptablePlugin interface {
	Plugin
	Preemptable(preemptor *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo
}

// ReclaimablePlugin narrows the tasks a starving queue may take back from
// other queues to those this plugin allows.
type ReclaimablePlugin interface {
	Plugin
	Reclaimable(reclaimer *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo
}

// PreemptivePlugin votes on whether a queue may take resources back from
// other queues (reclaim) to place a task: typically while the queue, with
// the task, stays within its deserved share.
type PreemptivePlugin interface {
	Plugin
	Preemptive(queue *api.QueueInfo, task *api.TaskInfo) bool
}

// VictimDistancePlugin ranks reclaim victims by how far their queue is
// from the reclaimer's in the queue tree (1 for a sibling, 2 for a cousin,
// ...): nearer queues give back first.
type VictimDistancePlugin interface {
	Plugin
	VictimDistance(reclaimer, victim *api.TaskInfo) int
}
