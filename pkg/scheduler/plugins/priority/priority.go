// Package priority orders jobs by the priority of their PodGroup's
// PriorityClass and tasks by their pods' priority, higher first.
package priority

import (
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "priority"

// Plugin is the priority plugin.
type Plugin struct{}

var (
	_ framework.JobOrderPlugin  = &Plugin{}
	_ framework.TaskOrderPlugin = &Plugin{}
)

// New builds the plugin; it takes no arguments.
var New = framework.NoArgs(Name, func() framework.Plugin { return &Plugin{} })

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// JobOrder puts higher-priority jobs first.
func (p *Plugin) JobOrder(l, r *api.JobInfo) int { return compare(l.Priority, r.Priority) }

// TaskOrder puts higher-priority tasks first.
func (p *Plugin) TaskOrder(l, r *api.TaskInfo) int { return compare(l.Priority, r.Priority) }

func compare(l, r int32) int {
	switch {
	case l > r:
		return -1
	case l < r:
		return 1
	}
	return 0
}
