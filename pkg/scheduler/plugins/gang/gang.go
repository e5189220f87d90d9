// Package gang makes a job all-or-nothing: it is valid only with at least
// minAvailable pods (and minTaskMember per task), ready only when that many
// are placed together, and jobs still short of their gang go first.
//
// Victims of preemption and reclaim are chosen gang by gang by the actions
// themselves (a gang left short of its minimum is evicted whole), so the
// plugin does not narrow them.
package gang

import (
	"fmt"
	"slices"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "gang"

// Plugin is the gang plugin.
type Plugin struct{}

var (
	_ framework.JobValidPlugin     = &Plugin{}
	_ framework.JobReadyPlugin     = &Plugin{}
	_ framework.JobPipelinedPlugin = &Plugin{}
	_ framework.JobStarvingPlugin  = &Plugin{}
	_ framework.JobOrderPlugin     = &Plugin{}
)

// New builds the plugin; it takes no arguments.
func New(args any, _ *framework.Handle) (framework.Plugin, error) {
	if args != nil {
		return nil, fmt.Errorf("plugin %s takes no arguments", Name)
	}
	return &Plugin{}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// JobValid rejects a job that has fewer pods than its gang needs, overall
// or for one of its tasks: it could never start.
func (p *Plugin) JobValid(job *api.JobInfo) *framework.Reason {
	valid := int32(len(job.Tasks)) - job.CountIn(api.Failed, api.Unknown, api.Releasing)
	if valid < job.MinAvailable {
		return framework.Reasonf("NotEnoughPods",
			"the job has %d pods that can run, fewer than its minAvailable %d", valid, job.MinAvailable)
	}
	if len(job.MinTaskMember) == 0 {
		return nil
	}
	byRole := map[string]int32{}
	for _, t := range job.Tasks {
		switch t.Status {
		case api.Failed, api.Unknown, api.Releasing:
		default:
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
	if len(job.MinTaskMember) == 0 {
		return true
	}
	placed := map[string]int32{}
	for _, t := range job.Tasks {
		switch t.Status {
		case api.Allocated, api.Binding, api.Bound, api.Running, api.Succeeded:
			placed[t.Role]++
		}
	}
	for role, min := range job.MinTaskMember {
		if placed[role] < min {
			return false
		}
	}
	return true
}

// JobPipelined permits holding resources when placed and pipelined tasks
// make up the gang.
func (p *Plugin) JobPipelined(job *api.JobInfo) framework.Vote {
	if job.PlacedCount() >= job.MinAvailable {
		return framework.Permit
	}
	return framework.Reject
}

// JobStarving: the job has not yet got its gang.
func (p *Plugin) JobStarving(job *api.JobInfo) bool {
	return job.PlacedCount() < job.MinAvailable
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
