package framework

import (
	"fmt"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

type opKind int

const (
	opAllocate opKind = iota
	opPipeline
	opEvict
)

type op struct {
	kind opKind
	task *api.TaskInfo
	node *api.NodeInfo
	// The task's status before; for a placement of a task that was
	// pipelined (nominated) elsewhere, the node it was on.
	was  api.TaskStatus
	from *api.NodeInfo
	// reason is why an evicted task is evicted; by is the job it is
	// evicted for.
	reason string
	by     api.JobID
}

// Statement groups the placements of one job so that they take effect
// together or not at all: Commit hands them to the binder, Discard undoes
// them in the snapshot as if they had never been made.
type Statement struct {
	ssn *Session
	ops []op
	// version is the session's state version when the statement began.
	version uint64
}

// NewStatement starts a transaction.
func (ssn *Session) NewStatement() *Statement { return &Statement{ssn: ssn, version: ssn.version} }

// Allocate places a task on a node's idle resources.
func (s *Statement) Allocate(t *api.TaskInfo, n *api.NodeInfo) error {
	return s.place(opAllocate, api.Allocated, t, n)
}

// Pipeline places a task on resources the node is releasing; it is bound in
// a later cycle once they are free.
func (s *Statement) Pipeline(t *api.TaskInfo, n *api.NodeInfo) error {
	return s.place(opPipeline, api.Pipelined, t, n)
}

func (s *Statement) place(kind opKind, status api.TaskStatus, t *api.TaskInfo, n *api.NodeInfo) error {
	if s.ssn.Snapshot.Lent(t.Job) {
		// Only a job with tasks to place is the snapshot's own; a task of
		// a job it shares with the cache has a place already.
		return fmt.Errorf("task %s/%s: job %s has nothing to place", t.Namespace, t.Name, t.Job)
	}
	job := s.ssn.Snapshot.Own(t.Job)
	if job == nil {
		return fmt.Errorf("task %s/%s: job %s not in snapshot", t.Namespace, t.Name, t.Job)
	}
	o := op{kind: kind, task: t, node: n, was: t.Status}
	if kind == opAllocate {
		if err := s.ssn.reserve(t, n); err != nil {
			return err
		}
	}
	if t.Status == api.Pipelined {
		// A nominated task placed at last (or elsewhere): its claim goes.
		// Plugins counted the claim; they see it end before the placement.
		if from := s.ssn.Snapshot.Nodes[t.NodeName]; from != nil {
			from.RemoveTask(s.ssn.Logger, t)
			s.ssn.touchedNodes[from.Name] = true
			o.from = from
		}
		s.ssn.fireDeallocate(t)
	}
	job.SetTaskStatus(t, status)
	t.NodeName = n.Name
	n.AddTask(t)
	s.ssn.touchedNodes[n.Name] = true
	s.ssn.touchedJobs[job.UID] = true
	s.ssn.forgetMemos(t)
	s.ssn.fireAllocate(t)
	s.ssn.version++
	s.ops = append(s.ops, o)
	return nil
}

// reserve lets the reserve plugins choose what the task takes on the node;
// when one refuses, the others' choices are undone.
func (ssn *Session) reserve(t *api.TaskInfo, n *api.NodeInfo) error {
	for i, p := range ssn.reservers {
		if st := p.Reserve(t, n); st != nil {
			for j := i - 1; j >= 0; j-- {
				ssn.reservers[j].Unreserve(t, n)
			}
			return fmt.Errorf("task %s/%s on node %s: %w", t.Namespace, t.Name, n.Name, st)
		}
	}
	return nil
}

func (ssn *Session) unreserve(t *api.TaskInfo, n *api.NodeInfo) {
	for i := len(ssn.reservers) - 1; i >= 0; i-- {
		ssn.reservers[i].Unreserve(t, n)
	}
}

// Evict marks a bound or running task as Releasing, so that the room it
// frees counts for placements that may wait for it (Pipeline). Its job and
// the plugins see it leave, as for an undone placement. Commit hands the
// eviction to the session's evictor; Discard puts the task back. by is the
// job the room is made for.
func (s *Statement) Evict(t *api.TaskInfo, by api.JobID, reason string) error {
	if s.ssn.evictor == nil {
		return fmt.Errorf("task %s/%s: the session has no evictor", t.Namespace, t.Name)
	}
	if t.Status != api.Running && t.Status != api.Bound {
		return fmt.Errorf("task %s/%s is %s: only a bound or running task can be evicted", t.Namespace, t.Name, t.Status)
	}
	job := s.ssn.Snapshot.Own(t.Job)
	if job == nil {
		return fmt.Errorf("task %s/%s: job %s not in snapshot", t.Namespace, t.Name, t.Job)
	}
	n, ok := s.ssn.Snapshot.Nodes[t.NodeName]
	if !ok {
		return fmt.Errorf("task %s/%s: node %q not in snapshot", t.Namespace, t.Name, t.NodeName)
	}
	// The job's own object for the task: t may be the one of the job as
	// the snapshot shared it, which nobody changes.
	jt := job.Tasks[t.UID]
	if jt == nil {
		return fmt.Errorf("task %s/%s: not in job %s", t.Namespace, t.Name, job.UID)
	}
	t = jt
	was := t.Status
	s.setStatus(job, n, t, api.Releasing)
	s.ssn.touchedNodes[n.Name] = true
	s.ssn.touchedJobs[job.UID] = true
	// Room appears once the task is gone: what was remembered about nodes
	// no longer holds.
	s.ssn.forgetAllMemos()
	s.ssn.fireDeallocate(t)
	s.ssn.version++
	s.ops = append(s.ops, op{kind: opEvict, task: t, node: n, was: was, reason: reason, by: by})
	return nil
}

// setStatus moves a placed task to another status, keeping its node's
// accounts in step.
func (s *Statement) setStatus(job *api.JobInfo, n *api.NodeInfo, t *api.TaskInfo, status api.TaskStatus) {
	n.RemoveTask(s.ssn.Logger, t)
	job.SetTaskStatus(t, status)
	n.AddTask(t)
}

// Merge moves the placements of inner, a statement begun after s and
// still open, into s: they are committed or discarded with s's. inner is
// left empty.
func (s *Statement) Merge(inner *Statement) {
	s.ops = append(s.ops, inner.ops...)
	inner.ops = nil
}

// Len is the number of placements in the statement.
func (s *Statement) Len() int { return len(s.ops) }

// Discard undoes every placement, newest first.
func (s *Statement) Discard() {
	if len(s.ops) > 0 {
		// Freed nodes may have left the kept candidates when they filled.
		s.ssn.forgetAllMemos()
	}
	for i := len(s.ops) - 1; i >= 0; i-- {
		o := s.ops[i]
		if o.kind == opEvict {
			if job := s.ssn.Snapshot.Own(o.task.Job); job != nil {
				s.setStatus(job, o.node, o.task, o.was)
			}
			s.ssn.fireAllocate(o.task)
			continue
		}
		o.node.RemoveTask(s.ssn.Logger, o.task)
		if o.kind == opAllocate {
			s.ssn.unreserve(o.task, o.node)
		}
		job := s.ssn.Snapshot.Own(o.task.Job)
		if o.from != nil {
			// Back to its claim, which plugins count again.
			if job != nil {
				job.SetTaskStatus(o.task, o.was)
			}
			o.task.NodeName = o.from.Name
			o.from.AddTask(o.task)
			s.ssn.fireDeallocate(o.task)
			s.ssn.fireAllocate(o.task)
			continue
		}
		if job != nil {
			job.SetTaskStatus(o.task, api.Pending)
		}
		o.task.NodeName = ""
		s.ssn.fireDeallocate(o.task)
	}
	s.ops = nil
	// The session is as it was when the statement began.
	s.ssn.version = s.version
}

// Commit hands the evictions to the evictor and the allocations to the
// binder; pipelined placements become nominations, claims on the room
// being freed that hold until the task is bound there in a later cycle.
//
// When the session's sink checks placements (GroupBindSink) and refuses
// them, because the room was taken since the snapshot, nothing is
// committed: the statement is undone, the job's outcome says why, and
// Commit returns false. The job is tried again in a later cycle.
func (s *Statement) Commit() bool {
	if g, ok := s.ssn.sink.(GroupBindSink); ok {
		var ps []api.Placement
		for _, o := range s.ops {
			if o.kind == opAllocate {
				ps = append(ps, api.Placement{Task: o.task, Node: o.node.Name, Seen: o.node.CacheVersion})
			}
		}
		if len(ps) > 0 {
			if err := g.BindGroup(ps); err != nil {
				job := ps[0].Task.Job
				s.Discard()
				s.ssn.conflicts++
				s.ssn.Block(job, Reasonf("Conflict", "placed on a snapshot another decision changed since; tried again: %v", err))
				return false
			}
		}
	}
	for _, o := range s.ops {
		if o.kind == opEvict {
			s.ssn.evictor.Evict(o.task, o.reason)
			s.ssn.evictions = append(s.ssn.evictions, Eviction{Task: o.task, By: o.by})
			continue
		}
		if o.kind == opPipeline {
			if s.ssn.nominator != nil {
				s.ssn.nominator.Nominate(o.task, o.node.Name)
			}
			continue
		}
		if job := s.ssn.Snapshot.Own(o.task.Job); job != nil {
			job.SetTaskStatus(o.task, api.Binding)
		}
		if _, grouped := s.ssn.sink.(GroupBindSink); !grouped && s.ssn.sink != nil {
			s.ssn.sink.Bind(o.task, o.node.Name)
		}
		s.ssn.bound++
	}
	s.ops = nil
	return true
}
