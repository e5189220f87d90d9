// Package backfill places best-effort tasks (no CPU or memory requests) of
// admitted jobs on any node whose predicates accept them. They take no
// resources from others, so they need no gang transaction.
package backfill

import (
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the action's name in the configuration.
const Name = "backfill"

// Action is the backfill action.
type Action struct{}

var _ framework.Action = &Action{}

// New returns the action.
func New() *Action { return &Action{} }

// Name returns the action's name.
func (a *Action) Name() string { return Name }

// Execute runs the action on a session.
func (a *Action) Execute(ssn *framework.Session) {
	// Only jobs with a best-effort task pending are sorted and judged: in
	// a backlog of thousands of jobs they are usually none of them.
	var jobs []*api.JobInfo
	for _, job := range ssn.Snapshot.WorkList() {
		if job.BestEffortPending() > 0 && framework.Admitted(job) {
			jobs = append(jobs, job)
		}
	}
	ssn.SortJobs(jobs)
	for _, job := range jobs {
		if r := ssn.JobValid(job); r != nil {
			continue
		}
		for _, t := range sortedBestEffort(ssn, job) {
			fits, _, fitErrs := ssn.Candidates(t)
			if len(fits) == 0 {
				ssn.Block(job.UID, framework.Reasonf("NotEnoughResources", "task %s: %s", t.Name, fitErrs))
				continue
			}
			stmt := ssn.NewStatement()
			if err := stmt.Allocate(t, ssn.BestNode(t, fits)); err != nil {
				ssn.Logger.Error(err, "Backfilling task failed", "task", t.Name)
				continue
			}
			stmt.Commit()
		}
	}
}

func sortedBestEffort(ssn *framework.Session, job *api.JobInfo) []*api.TaskInfo {
	var tasks []*api.TaskInfo
	for t := range job.TasksIn(api.Pending) {
		if t.BestEffort {
			tasks = append(tasks, t)
		}
	}
	ssn.SortTasks(tasks)
	return tasks
}
