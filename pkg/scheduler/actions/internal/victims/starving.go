package victims

import (
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Starving are the rules of an action that places starving jobs by
// evicting tasks of other jobs: preempt and reclaim differ only in these.
type Starving struct {
	// Policy is the victim search's.
	Policy *Policy
	// QueueTakes reports whether jobs of the queue may act at all (reclaim:
	// only from an open queue); nil: every queue.
	QueueTakes func(q *api.QueueInfo) bool
	// SkipQueue, if set, leaves a queue out when its turn comes (reclaim:
	// a queue holding more than it deserves).
	SkipQueue func(q *api.QueueInfo) bool
	// Gate says whether a task of a job of q may be placed now.
	Gate func(q *api.QueueInfo, t *api.TaskInfo) (bool, *framework.Reason)
	// Cause says, for the victim's event, whom it was evicted for.
	Cause func(q *api.QueueInfo, job *api.JobInfo, preemptor *api.TaskInfo) string
}

// PlaceStarving places the session's starving jobs (admitted, valid, with
// pending tasks, allowed to preempt), queue by queue and job by job in the
// session's order, each with the evictions it needs committed only when
// they give it its gang; a job left unplaced is blocked with why.
func PlaceStarving(ssn *framework.Session, s Starving) {
	byQueue := ssn.NewJobQueues()
	for _, job := range ssn.Snapshot.JobList() {
		if !framework.Admitted(job) || job.PendingCount() == 0 || !ssn.JobStarving(job) || job.PreemptNever {
			continue
		}
		q, ok := ssn.Snapshot.Queues[job.Queue]
		if !ok || s.QueueTakes != nil && !s.QueueTakes(q) || ssn.JobValid(job) != nil {
			continue
		}
		byQueue.Push(job)
	}
	search := NewSearch(ssn, s.Policy)
	queues := byQueue.Queues()
	for {
		queue, ok := queues.Pop()
		if !ok {
			return
		}
		if s.SkipQueue != nil && s.SkipQueue(queue) {
			continue
		}
		jobs := byQueue.Jobs(queue.UID)
		for {
			job, ok := jobs.Pop()
			if !ok {
				break
			}
			gate := func(t *api.TaskInfo) (bool, *framework.Reason) { return s.Gate(queue, t) }
			r := search.Place(job, gate, func(t *api.TaskInfo) string { return s.Cause(queue, job, t) })
			ssn.Block(job.UID, r.Blocked)
		}
	}
}
