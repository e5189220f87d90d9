// Package overcommit admits jobs (enqueue) while their minimum resources fit
// in the cluster's allocatable resources, multiplied by an overcommit factor,
// less what is used and what admitted jobs still wait for. It keeps the
// number of admitted-but-unplaceable jobs bounded without requiring every
// admitted job to fit at once.
package overcommit

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/pluginargs"
)

// Name is the plugin's name in the configuration.
const Name = "overcommit"

// Plugin is the overcommit plugin.
type Plugin struct {
	factor  float64
	factors map[corev1.ResourceName]float64

	// Per cycle: the overcommitted capacity left for new jobs.
	idle *api.Resource
}

var (
	_ framework.SessionPlugin        = &Plugin{}
	_ framework.JobEnqueueablePlugin = &Plugin{}
	_ framework.JobEnqueuedPlugin    = &Plugin{}
)

// New builds the plugin from *OvercommitArgs (nil means the defaults).
func New(args any, _ *framework.Handle) (framework.Plugin, error) {
	a, err := pluginargs.Typed[configv1alpha1.OvercommitArgs](Name, args)
	if err != nil {
		return nil, err
	}
	return &Plugin{factor: *a.Factor, factors: a.ResourceFactors}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen computes the overcommitted capacity left: allocatable times
// the factors, less what tasks use and what admitted jobs still need.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	totals := ssn.Snapshot.Totals()
	idle := &api.Resource{}
	for _, name := range totals.Allocatable.Names() {
		idle.Set(name, int64(float64(totals.Allocatable.Get(name))*p.factorOf(name)))
	}
	idle.Sub(totals.Used)
	for _, q := range totals.Queues {
		idle.Sub(q.InqueueNeeded)
	}
	p.idle = idle
}

// waiting is what an admitted job still needs of its minimum.
func waiting(j *api.JobInfo) *api.Resource {
	return j.MinResources.Clone().Sub(j.Allocated).ClampNegatives()
}

func (p *Plugin) factorOf(name corev1.ResourceName) float64 {
	if f, ok := p.factors[name]; ok {
		return f
	}
	return p.factor
}

// OnSessionClose drops the cycle's state.
func (p *Plugin) OnSessionClose(*framework.Session) { p.idle = nil }

// JobEnqueueable admits a job whose minimum fits in what is left.
func (p *Plugin) JobEnqueueable(job *api.JobInfo) (framework.Vote, *framework.Reason) {
	if job.MinResources == nil {
		return framework.Permit, nil
	}
	for _, name := range job.MinResources.Names() {
		if name == corev1.ResourcePods {
			continue
		}
		if job.MinResources.Get(name) > p.idle.Get(name) {
			return framework.Reject, framework.Reasonf("ClusterOvercommitted",
				"the cluster cannot admit the job: its minimum needs %s %s, and %s is left of the cluster's resources times its overcommit factor after running and admitted jobs",
				job.MinResources.Quantity(name), name, p.idle.Quantity(name))
		}
	}
	return framework.Permit, nil
}

// JobEnqueued counts an admitted job's minimum.
func (p *Plugin) JobEnqueued(job *api.JobInfo) {
	if job.MinResources != nil {
		p.idle.Sub(job.MinResources)
	}
}
