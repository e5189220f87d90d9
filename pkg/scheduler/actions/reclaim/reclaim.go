// Package reclaim lets a queue below its deserved share take back what
// other queues borrowed: a starving job of such a queue evicts running
// tasks of queues that hold more than they deserve, nearest queues in the
// tree first, never below a queue's guarantee and never from a queue that
// is not reclaimable. The queue-sharing plugin (capacity or proportion)
// decides both sides: which queues may reclaim (Preemptive) and which
// tasks they may take (Reclaimable). As for preemption, a job's evictions
// and placements commit only when they give it its gang.
package reclaim

import (
	"fmt"

	"github.com/caldera-sh/caldera/pkg/scheduler/actions/internal/victims"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the action's name in the configuration.
const Name = "reclaim"

// Action is the reclaim action.
type Action struct {
	// candidates says how many nodes where evictions would make room to
	// find before choosing, given the number of nodes.
	candidates func(nodes int) int
}

var _ framework.Action = &Action{}

// New returns the action. candidates says how many nodes where evictions
// would make room to find before choosing the best (nil: every node).
func New(candidates func(nodes int) int) *Action { return &Action{candidates: candidates} }

// Name returns the action's name.
func (a *Action) Name() string { return Name }

// Execute runs the action on a session.
func (a *Action) Execute(ssn *framework.Session) {
	victims.PlaceStarving(ssn, victims.Starving{
		Policy: &victims.Policy{
			Candidates: a.candidates,
			Eligible: func(reclaimer, victimJob *api.JobInfo, _ *api.TaskInfo) bool {
				return victimJob.Queue != reclaimer.Queue
			},
			Narrow:   ssn.Reclaimable,
			Distance: ssn.VictimDistance,
			NoVictims: func(t *api.TaskInfo) *framework.Reason {
				return framework.Reasonf("NoReclaimVictims",
					"no node has pods of other queues above their deserved share that may be reclaimed to make room for task %s", t.Name)
			},
		},
		QueueTakes: (*api.QueueInfo).Open,
		SkipQueue:  ssn.Overused,
		Gate: func(queue *api.QueueInfo, t *api.TaskInfo) (bool, *framework.Reason) {
			if ok, r := ssn.Allocatable(queue, t); !ok {
				return false, r
			}
			if !ssn.Preemptive(queue, t) {
				return false, framework.Reasonf("QueueDeservedReached",
					"queue %s would hold more than it deserves with task %s, so it may not take resources back from other queues", queue.Name, t.Name).Of(framework.KindQueue)
			}
			return true, nil
		},
		Cause: func(queue *api.QueueInfo, job *api.JobInfo, t *api.TaskInfo) string {
			return fmt.Sprintf("reclaimed by queue %s for %s/%s (job %s)", queue.Name, t.Namespace, t.Name, job.Name)
		},
	})
}
