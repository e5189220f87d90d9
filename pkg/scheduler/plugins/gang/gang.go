// Package gang makes a job all-or-nothing: it is valid only with at least
// minAvailable pods (and minTaskMember per task), ready only when that many
// are placed together, and jobs still short of their gang go first.
//
// Victims of preemption and reclaim are chosen gang by gang by the actions
// themselves (a gang left short of its minimum is evicted whole), so the
// plugin does not narrow them.
package gang

import (
	"slices"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "gang"

// Plugin is the gang plugin.
type Plugin struct {
	ssn *framework.Session
}

var (
	_ framework.SessionPlugin      = &Plugin{}
	_ framework.JobValidPlugin     = &Plugin{}
	_ framework.JobReadyPlugin     = &Plugin{}
	_ framework.JobPipelinedPlugin = &Plugin{}
	_ framework.JobStarvingPlugin  = &Plugin{}
	_ framework.JobOrderPlugin     = &Plugin{}
)

// New builds the plugin; it takes no arguments.
var New = framework.NoArgs(Name, func() framework.Plugin { return &Plugin{} })

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen keeps the session, for the jobs' sub-groups.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) { p.ssn = ssn }

// OnSessionClose drops it.
func (p *Plugin) OnSessionClose(*framework.Session) { p.ssn = nil }

// subGroups returns the job's sub-group policies.
func (p *Plugin) subGroups(job *api.JobInfo) ([]*api.SubGroupPolicy, error) {
	if p.ssn == nil {
		return api.SubGroupsOf(job)
	}
	return p.ssn.SubGroups(job)
}

// wholeSubGroups reports whether every sub-group policy of the job with a
// minSubGroups has that many sub-groups whose tasks, counted by ok, make
// them whole; the first policy short of it is named.
func (p *Plugin) wholeSubGroups(job *api.JobInfo, ok func(api.TaskStatus) bool) (short *api.SubGroupPolicy, whole int32) {
	policies, err := p.subGroups(job)
	if err != nil {
		return nil, 0
	}
	for _, sp := range policies {
		if sp.MinSubGroups == 0 {
			continue
		}
		n := int32(0)
		for _, g := range sp.Groups {
			if g.CountIf(ok) >= g.Size {
				n++
			}
		}
		if n < sp.MinSubGroups {
			return sp, n
		}
	}
	return nil, 0
}

func ready(s api.TaskStatus) bool {
	switch s {
	case api.Allocated, api.Binding, api.Bound, api.Running, api.Succeeded:
		return true
	}
	return false
}

// JobValid rejects a job that has fewer pods than its gang needs, overall
// or for one of its tasks: it could never start.
func (p *Plugin) JobValid(job *api.JobInfo) *framework.Reason {
	valid := int32(len(job.Tasks)) - job.CountIn(api.Failed, api.Unknown, api.Releasing)
	if valid < job.MinAvailable {
		return framework.Reasonf("NotEnoughPods",
			"the job has %d pods that can run, fewer than its minAvailable %d", valid, job.MinAvailable)
	}
	if _, err := p.subGroups(job); err != nil {
		return framework.Reasonf("InvalidSubGroupPolicy", "%v", err)
	}
	if sp, n := p.wholeSubGroups(job, api.TaskStatus.Live); sp != nil {
		return framework.Reasonf("NotEnoughPods",
			"sub-group policy %s has %d whole sub-groups of pods that can run, fewer than its minSubGroups %d", sp.Name, n, sp.MinSubGroups)
	}
	if len(job.MinTaskMember) == 0 {
		return nil
	}
	byRole := map[string]int32{}
	for _, t := range job.Tasks {
		if t.Status.Live() {
			byRole[t.Role]++
		}
	}
	for _, role := range sortedKeys(job.MinTaskMember) {
		if min := job.MinTaskMember[role]; byRole[role] < min {
			return framework.Reasonf("NotEnoughPods",
				"task %s has %d pods that can run, fewer than its minAvailable %d", role, byRole[role], min)
		}
	}
	return nil
}

// JobReady: enough tasks are placed (not merely pipelined) to start the job.
func (p *Plugin) JobReady(job *api.JobInfo) bool {
	if job.CountIn(api.Allocated, api.Binding, api.Bound, api.Running, api.Succeeded) < job.MinAvailable {
		return false
	}
	if sp, _ := p.wholeSubGroups(job, ready); sp != nil {
		return false
	}
	return job.RolesMet(ready)
}

// JobPipelined permits holding resources when placed and pipelined tasks
// make up the gang, each role's minimum included.
func (p *Plugin) JobPipelined(job *api.JobInfo) framework.Vote {
	if job.PlacedCount() < job.MinAvailable || !job.RolesMet(api.TaskStatus.Placed) {
		return framework.Reject
	}
	if sp, _ := p.wholeSubGroups(job, api.TaskStatus.Placed); sp != nil {
		return framework.Reject
	}
	return framework.Permit
}

// JobStarving: the job has not yet got its gang (its whole sub-groups
// included).
func (p *Plugin) JobStarving(job *api.JobInfo) bool {
	if job.PlacedCount() < job.MinAvailable || !job.RolesMet(api.TaskStatus.Placed) {
		return true
	}
	sp, _ := p.wholeSubGroups(job, api.TaskStatus.Placed)
	return sp != nil
}

// JobOrder puts jobs still short of their gang before jobs that have it.
func (p *Plugin) JobOrder(l, r *api.JobInfo) int {
	lReady, rReady := p.JobReady(l), p.JobReady(r)
	switch {
	case lReady == rReady:
		return 0
	case lReady:
		return 1
	}
	return -1
}

func sortedKeys(m map[string]int32) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
