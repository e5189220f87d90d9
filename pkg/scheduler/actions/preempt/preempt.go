// Package preempt lets a job that cannot be placed evict lower-priority
// pods of its own queue to make room: for each task, the node where the
// fewest and least important victims free enough room; the job's evictions
// and placements are one transaction, committed only when they give the
// job its gang.
package preempt

import (
	"fmt"

	"github.com/caldera-sh/caldera/pkg/scheduler/actions/internal/victims"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the action's name in the configuration.
const Name = "preempt"

// Action is the preempt action.
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
			Eligible:   eligible,
			Narrow:     ssn.Preemptable,
			NoVictims: func(t *api.TaskInfo) *framework.Reason {
				return framework.Reasonf("NoPreemptionVictims",
					"no node has lower-priority pods of the job's queue that may be preempted to make room for task %s", t.Name)
			},
		},
		Gate: ssn.Allocatable,
		Cause: func(_ *api.QueueInfo, job *api.JobInfo, t *api.TaskInfo) string {
			return fmt.Sprintf("preempted by %s/%s (job %s, priority %d)", t.Namespace, t.Name, job.Name, job.Priority)
		},
	})
}

// eligible: preemption takes from jobs of the same queue with a strictly
// lower priority.
func eligible(preemptor, victimJob *api.JobInfo, _ *api.TaskInfo) bool {
	return victimJob.Queue == preemptor.Queue && victimJob.Priority < preemptor.Priority
}
