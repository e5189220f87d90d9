// Package cdp protects pods from preemption and reclaim for a while after
// they start (cooldown protection): a pod whose volcano.sh/cooldown-time
// (a label or annotation of the pod, else an annotation of its PodGroup,
// which a Volcano Job's annotations reach) has not yet passed since it
// started is no victim. Elastic jobs that are preempted and come back need
// it, or their pods could be evicted again right after starting.
package cdp

import (
	"time"

	"github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "cdp"

// Plugin is the cdp plugin.
type Plugin struct {
	ssn *framework.Session
}

var (
	_ framework.SessionPlugin     = &Plugin{}
	_ framework.PreemptablePlugin = &Plugin{}
	_ framework.ReclaimablePlugin = &Plugin{}
)

// New builds the plugin; it takes no arguments.
var New = framework.NoArgs(Name, func() framework.Plugin { return &Plugin{} })

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen keeps the session, for the cycle's time and the victims'
// jobs.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) { p.ssn = ssn }

// OnSessionClose forgets it.
func (p *Plugin) OnSessionClose(*framework.Session) { p.ssn = nil }

// Preemptable drops the candidates still cooling down.
func (p *Plugin) Preemptable(_ *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	return p.cooled(candidates)
}

// Reclaimable drops the candidates still cooling down.
func (p *Plugin) Reclaimable(_ *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	return p.cooled(candidates)
}

func (p *Plugin) cooled(candidates []*api.TaskInfo) []*api.TaskInfo {
	out := make([]*api.TaskInfo, 0, len(candidates))
	for _, t := range candidates {
		if !p.coolingDown(t) {
			out = append(out, t)
		}
	}
	return out
}

// coolingDown reports whether the task started less than its cooldown
// time ago. A pod that has not started yet cools down from its creation.
func (p *Plugin) coolingDown(t *api.TaskInfo) bool {
	d, ok := CooldownOf(t, p.ssn.Snapshot.Jobs[t.Job])
	if !ok {
		return false
	}
	start := t.Pod.CreationTimestamp.Time
	if st := t.Pod.Status.StartTime; st != nil {
		start = st.Time
	}
	return p.ssn.Now.Before(start.Add(d))
}

// CooldownOf returns the task's cooldown time: its pod's label or
// annotation, else its PodGroup's annotation. A value that is not a
// positive duration counts as none (the pod webhook refuses such values).
func CooldownOf(t *api.TaskInfo, job *api.JobInfo) (time.Duration, bool) {
	v, ok := t.Pod.Labels[v1beta1.CooldownTimeKey]
	if !ok {
		v, ok = t.Pod.Annotations[v1beta1.CooldownTimeKey]
	}
	if !ok && job != nil && job.PodGroup != nil {
		v, ok = job.PodGroup.Annotations[v1beta1.CooldownTimeKey]
	}
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, false
	}
	return d, true
}
