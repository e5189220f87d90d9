package framework

import (
	"slices"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework/pq"
)

// JobQueues groups an action's jobs by queue: each queue's jobs in job
// order, the queues in queue order.
type JobQueues struct {
	ssn     *Session
	byQueue map[api.QueueID]*pq.Queue[*api.JobInfo]
}

// NewJobQueues returns an empty grouping.
func (ssn *Session) NewJobQueues() *JobQueues {
	return &JobQueues{ssn: ssn, byQueue: map[api.QueueID]*pq.Queue[*api.JobInfo]{}}
}

// Push adds a job; its queue must be in the snapshot.
func (q *JobQueues) Push(job *api.JobInfo) {
	jobs := q.byQueue[job.Queue]
	if jobs == nil {
		jobs = pq.New(q.ssn.JobLess)
		q.byQueue[job.Queue] = jobs
	}
	jobs.Push(job)
}

// Queues returns the queues that have jobs, in queue order.
func (q *JobQueues) Queues() *pq.Queue[*api.QueueInfo] {
	ids := make([]api.QueueID, 0, len(q.byQueue))
	for id := range q.byQueue {
		ids = append(ids, id)
	}
	// Pushed in a fixed order: queues' shares change while they wait (as
	// reclaim takes from them), so the heap's layout must not depend on the
	// map's order.
	slices.Sort(ids)
	queues := pq.New(q.ssn.QueueLess)
	for _, id := range ids {
		queues.Push(q.ssn.Snapshot.Queues[id])
	}
	return queues
}

// Jobs returns a queue's jobs in job order.
func (q *JobQueues) Jobs(id api.QueueID) *pq.Queue[*api.JobInfo] { return q.byQueue[id] }
