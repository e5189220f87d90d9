// Package allocate places admitted jobs: queue by queue in queue order, job
// by job in job order, each gang as one transaction that commits only when
// enough of its tasks are placed to start it.
package allocate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the action's name in the configuration.
const Name = "allocate"

// Action is the allocate action.
type Action struct{}

var _ framework.Action = &Action{}

// New returns the action.
func New() *Action { return &Action{} }

// Name returns the action's name.
func (a *Action) Name() string { return Name }

// Execute runs the action on a session.
func (a *Action) Execute(ssn *framework.Session) {
	byQueue := ssn.NewJobQueues()
	for _, job := range ssn.Snapshot.WorkList() {
		if !framework.Admitted(job) || (pendingTasks(job) == 0 && job.CountIn(api.Pipelined) == 0) {
			continue
		}
		if _, ok := ssn.Snapshot.Queues[job.Queue]; !ok {
			ssn.Block(job.UID, framework.Reasonf("QueueNotFound", "queue %q does not exist", job.Queue).Of(framework.KindJob))
			continue
		}
		if r := ssn.JobValid(job); r != nil {
			ssn.Block(job.UID, r)
			continue
		}
		byQueue.Push(job)
	}
	queues := byQueue.Queues()
	for {
		if ssn.OutOfTime() {
			// The rest waits for the next cycle, which sees the cluster
			// as it then is.
			return
		}
		queue, ok := queues.Pop()
		if !ok {
			return
		}
		jobs := byQueue.Jobs(queue.UID)
		if ssn.Overused(queue) {
			// The queue counts the claims of its nominated tasks in what it
			// holds: those are still bound; nothing new is placed.
			for job, ok := jobs.Pop(); ok; job, ok = jobs.Pop() {
				allocateJob(ssn, queue, job, overused(queue))
			}
			continue
		}
		job, _ := jobs.Pop()
		allocateJob(ssn, queue, job, nil)
		if jobs.Len() > 0 {
			queues.Push(queue)
		}
	}
}

// pendingTasks counts the tasks allocate is responsible for: pending tasks
// that request resources (best-effort ones are backfill's).
func pendingTasks(job *api.JobInfo) int32 {
	return job.CountIn(api.Pending) - job.BestEffortPending()
}

func overused(queue *api.QueueInfo) *framework.Reason {
	return framework.Reasonf("QueueOverused",
		"queue %s has used its share of the cluster; the job waits for resources to be released", queue.Name).Of(framework.KindQueue)
}

// allocateJob places a job's nominated tasks where their room is free and
// its pending tasks where they fit, as one statement kept only if the job
// then has its gang. With a reason in held, only nominated tasks are
// placed. A job with a network topology constraint is placed whole within
// one of the domains its topology plugin gives, tried in order.
func allocateJob(ssn *framework.Session, queue *api.QueueInfo, job *api.JobInfo, held *framework.Reason) {
	if held != nil && job.CountIn(api.Pipelined) == 0 {
		ssn.Block(job.UID, held)
		return
	}
	if d := ssn.Domains(job, false); d != nil {
		allocateInDomains(ssn, queue, job, held, d)
		return
	}
	stmt, blocked := attempt(ssn, queue, job, held)
	settle(ssn, job, stmt, blocked)
}

// allocateInDomains tries the job within each domain in turn and keeps
// the first attempt that gives it its gang; a soft constraint then lets it
// be placed anywhere.
func allocateInDomains(ssn *framework.Session, queue *api.QueueInfo, job *api.JobInfo, held *framework.Reason, d *framework.Domains) {
	var closest *framework.Domain
	var closestPlaced int32 = -1
	var closestWhy *framework.Reason
	calls := 0
	if ssn.TryInDomains(d, func() bool {
		calls++
		stmt, blocked := attempt(ssn, queue, job, held)
		if calls > len(d.List) {
			// Soft, after the domains: placed anywhere.
			settle(ssn, job, stmt, blocked)
			return true
		}
		if ssn.JobReady(job) || ssn.JobPipelined(job) {
			settle(ssn, job, stmt, blocked)
			return true
		}
		if placed := job.PlacedCount(); placed > closestPlaced {
			closest, closestPlaced, closestWhy = ssn.CurrentScope(), placed, blocked
		}
		stmt.Discard()
		return false
	}) || !d.Hard {
		return
	}
	if held != nil {
		ssn.Block(job.UID, held)
		return
	}
	why := d.Why
	if why == nil {
		msg := fmt.Sprintf("none of the %d network domains the job may use holds its gang (minAvailable %d)", len(d.List), job.MinAvailable)
		if closest != nil {
			msg += fmt.Sprintf("; %s (tier %d) comes closest with %d of %d tasks placeable", closest.Name, closest.Tier, closestPlaced, len(job.Tasks))
			if closestWhy != nil {
				msg += ": " + closestWhy.Message
			}
		}
		why = framework.Reasonf("TopologyConstraint", "%s", msg)
	}
	ssn.Block(job.UID, why.Of(framework.KindTopology))
}

// attempt places the job's nominated and pending tasks as one statement;
// it returns the statement and what stopped it, nil when nothing did.
func attempt(ssn *framework.Session, queue *api.QueueInfo, job *api.JobInfo, held *framework.Reason) (*framework.Statement, *framework.Reason) {
	stmt := ssn.NewStatement()
	var blocked *framework.Reason
	// Nominated tasks first: bound where the room freed for them is free
	// now, left waiting where it is still being freed, and placed afresh
	// where it can no longer be had.
	nominated := make([]*api.TaskInfo, 0, int(job.CountIn(api.Pipelined)))
	for t := range job.TasksIn(api.Pipelined) {
		nominated = append(nominated, t)
	}
	ssn.SortTasks(nominated)
	for _, t := range nominated {
		switch ssn.ClaimOf(t) {
		case framework.ClaimVoid:
			ssn.DropClaim(t)
		case framework.ClaimReady:
			// The queue admitted the task when the claim was made, and
			// counts the claim in what it holds.
			if err := stmt.Allocate(t, ssn.Snapshot.Nodes[t.NodeName]); err != nil {
				ssn.Logger.Error(err, "Allocating nominated task failed", "task", t.Name)
				blocked = framework.Reasonf("InternalError", "%v", err)
			}
		}
	}

	tasks := make([]*api.TaskInfo, 0, int(job.CountIn(api.Pending)))
	for t := range job.TasksIn(api.Pending) {
		if !t.BestEffort {
			tasks = append(tasks, t)
		}
	}
	ssn.SortTasks(tasks)
	if held != nil && len(tasks) > 0 {
		blocked = held
	}
	if blocked != nil {
		return stmt, blocked
	}

	// Sub-groups first, each placed whole (within one of its network
	// domains) or not at all; one that cannot be placed leaves the others
	// to try. The job's other tasks follow.
	policies, err := ssn.SubGroups(job)
	if err != nil {
		return stmt, framework.Reasonf("InvalidSubGroupPolicy", "%v", err).Of(framework.KindJob)
	}
	var subBlocked *framework.Reason
	grouped := map[api.TaskID]bool{}
	for _, p := range policies {
		for _, g := range p.Groups {
			for _, t := range g.Tasks {
				grouped[t.UID] = true
			}
			r, gate := placeSubGroup(ssn, stmt, queue, job, g)
			if gate {
				return stmt, r
			}
			if subBlocked == nil {
				subBlocked = r
			}
		}
	}
	for _, t := range tasks {
		if grouped[t.UID] {
			continue
		}
		if r, _ := placeTask(ssn, stmt, queue, t); r != nil {
			return stmt, r
		}
	}
	return stmt, subBlocked
}

// placeTask places one task where it fits now, or pipelines it where it
// fits once room being freed is free. It returns why it could not, with
// gate set when the queue refused the task (no other task of the job may
// be placed either).
func placeTask(ssn *framework.Session, stmt *framework.Statement, queue *api.QueueInfo, t *api.TaskInfo) (r *framework.Reason, gate bool) {
	if ok, r := ssn.Allocatable(queue, t); !ok {
		return r, true
	}
	node, future, fitErrs := ssn.FindNode(t)
	switch {
	case node != nil && !future:
		if err := stmt.Allocate(t, node); err != nil {
			ssn.Logger.Error(err, "Allocating task failed", "task", t.Name)
			return framework.Reasonf("InternalError", "%v", err), false
		}
	case node != nil:
		if err := stmt.Pipeline(t, node); err != nil {
			ssn.Logger.Error(err, "Pipelining task failed", "task", t.Name)
			return framework.Reasonf("InternalError", "%v", err), false
		}
	default:
		return framework.Reasonf("NotEnoughResources", "task %s: %s", t.Name, fitErrs), false
	}
	return nil, false
}

// placeSubGroup places the pending tasks of a sub-group together, into
// stmt, or none of them: within the first of its network domains that
// holds them all when it has a constraint (anywhere in the current scope
// after that, when the constraint is soft). It returns why it could not,
// with gate set when the queue refused a task.
func placeSubGroup(ssn *framework.Session, stmt *framework.Statement, queue *api.QueueInfo, job *api.JobInfo, g *api.SubGroup) (r *framework.Reason, gate bool) {
	var pending []*api.TaskInfo
	for _, t := range g.Tasks {
		if t.Status == api.Pending && !t.BestEffort {
			pending = append(pending, t)
		}
	}
	if len(pending) == 0 {
		return nil, false
	}
	if live := g.CountIf(api.TaskStatus.Live); live < g.Size {
		return framework.Reasonf("NotEnoughPods", "sub-group %s has %d pods that can run, fewer than its size %d", g.Name, live, g.Size), false
	}
	ssn.SortTasks(pending)
	try := func() (r *framework.Reason, gate bool) {
		inner := ssn.NewStatement()
		for _, t := range pending {
			if r, gate := placeTask(ssn, inner, queue, t); r != nil {
				inner.Discard()
				return r, gate
			}
		}
		stmt.Merge(inner)
		return nil, false
	}
	d := ssn.SubGroupDomains(job, g, false)
	if d == nil {
		return try()
	}
	var first *framework.Reason
	if ssn.TryInDomains(d, func() bool {
		r, gate = try()
		if r != nil && !gate && first == nil {
			first = r
		}
		return r == nil || gate
	}) || !d.Hard {
		return r, gate
	}
	why := d.Why
	if why == nil {
		msg := fmt.Sprintf("none of the %d network domains sub-group %s may use holds its %d pending pods", len(d.List), g.Name, len(pending))
		if first != nil {
			msg += fmt.Sprintf("; in %s: %s", d.List[0].Name, first.Message)
		}
		why = framework.Reasonf("TopologyConstraint", "%s", msg)
	}
	return why.Of(framework.KindTopology), false
}

// settle decides an attempt: committed when the job has its gang, kept
// (claims held for the rest of the cycle) when it has it only with tasks
// waiting for room being freed, undone otherwise.
func settle(ssn *framework.Session, job *api.JobInfo, stmt *framework.Statement, blocked *framework.Reason) {
	switch {
	case ssn.JobReady(job):
		stmt.Commit()
		if blocked != nil {
			ssn.Block(job.UID, blocked)
		}
	case ssn.JobPipelined(job):
		// Keep the claims for the rest of this cycle, so later jobs cannot
		// take the resources this job waits for; nothing is bound.
		ssn.Block(job.UID, waiting(ssn, job))
	default:
		placeable, short := job.PlacedCount(), shortRoles(job)
		stmt.Discard()
		if blocked == nil {
			blocked = framework.Reasonf("GangShortfall", "the job's tasks do not make up its gang")
		}
		need := fmt.Sprintf("%d needed together (minAvailable)", job.MinAvailable)
		if placeable >= job.MinAvailable && short != "" {
			need = short
		}
		ssn.Block(job.UID, &framework.Reason{
			Type: blocked.Type,
			Kind: blocked.Kind,
			Message: fmt.Sprintf("%d of %d tasks placeable, %s; %s",
				placeable, len(job.Tasks), need, blocked.Message),
		})
	}
}

// shortRoles says which tasks have fewer placeable pods than their
// minimum (minTaskMember), or "" when none has.
func shortRoles(job *api.JobInfo) string {
	placed := map[string]int32{}
	for _, t := range job.Tasks {
		if t.Status.Placed() {
			placed[t.Role]++
		}
	}
	var out []string
	for _, role := range slices.Sorted(maps.Keys(job.MinTaskMember)) {
		if min := job.MinTaskMember[role]; placed[role] < min {
			out = append(out, fmt.Sprintf("task %s needs %d together (minAvailable of the task), %d placeable", role, min, placed[role]))
		}
	}
	return strings.Join(out, ", ")
}

// waiting explains a job that holds its gang only with tasks waiting for
// room being freed: which pods it waits for, on which nodes.
func waiting(ssn *framework.Session, job *api.JobInfo) *framework.Reason {
	var nodes []string
	var releasing []string
	seen := map[string]bool{}
	for t := range job.TasksIn(api.Pipelined) {
		if seen[t.NodeName] {
			continue
		}
		seen[t.NodeName] = true
		nodes = append(nodes, t.NodeName)
		if n := ssn.Snapshot.Nodes[t.NodeName]; n != nil {
			for _, o := range n.Tasks {
				if o.Status == api.Releasing {
					releasing = append(releasing, o.Namespace+"/"+o.Name)
				}
			}
		}
	}
	slices.Sort(nodes)
	slices.Sort(releasing)
	return framework.Reasonf("PreemptionPending",
		"%d of %d tasks placed or waiting on nodes %s for the room of %d pods being deleted (%s); minAvailable %d",
		job.PlacedCount(), len(job.Tasks), strings.Join(nodes, ", "), len(releasing), shortList(releasing, 5), job.MinAvailable).Of(framework.KindPreemption)
}

// shortList joins the first max items, counting the rest.
func shortList(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}
