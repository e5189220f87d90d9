// Package enqueue admits Pending jobs to Inqueue when their queue is open and
// the plugins (queue room, cluster overcommit) let them in. Only admitted
// jobs are placed, so a queue cannot be flooded with pods that could never
// run together.
package enqueue

import (
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the action's name in the configuration.
const Name = "enqueue"

// Action is the enqueue action.
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
		if framework.Admitted(job) {
			continue
		}
		queue, ok := ssn.Snapshot.Queues[job.Queue]
		switch {
		case !ok:
			ssn.Block(job.UID, framework.Reasonf("QueueNotFound", "queue %q does not exist", job.Queue).Of(framework.KindJob))
			continue
		case !queue.Open():
			ssn.Block(job.UID, framework.Reasonf("QueueClosed", "queue %s is %s and admits no new jobs", queue.Name, queue.State).Of(framework.KindJob))
			continue
		}
		byQueue.Push(job)
	}
	queues := byQueue.Queues()
	for {
		queue, ok := queues.Pop()
		if !ok {
			return
		}
		jobs := byQueue.Jobs(queue.UID)
		job, _ := jobs.Pop()
		if ok, reason := ssn.JobEnqueueable(job); ok {
			job.Phase = schedulingv1beta1.PodGroupInqueue
			ssn.JobEnqueued(job)
		} else {
			ssn.Block(job.UID, reason)
		}
		if jobs.Len() > 0 {
			queues.Push(queue)
		}
	}
}
