// Package drf orders jobs, and namespaces, by dominant resource share
// (Dominant Resource Fairness): the job holding the smallest largest
// fraction of any cluster resource goes first.
package drf

import (
	"fmt"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "drf"

// Plugin is the drf plugin. Its shares are computed when a cycle opens and
// follow the cycle's placements.
type Plugin struct {
	total      *api.Resource
	jobs       map[api.JobID]*api.Resource
	namespaces map[string]*api.Resource
}

var (
	_ framework.SessionPlugin        = &Plugin{}
	_ framework.JobOrderPlugin       = &Plugin{}
	_ framework.NamespaceOrderPlugin = &Plugin{}
	_ framework.EventHandlerPlugin   = &Plugin{}
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

// OnSessionOpen computes every job's and namespace's allocation.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	p.total = ssn.Snapshot.TotalAllocatable()
	p.jobs = make(map[api.JobID]*api.Resource, len(ssn.Snapshot.Jobs))
	p.namespaces = map[string]*api.Resource{}
	for id, j := range ssn.Snapshot.Jobs {
		p.jobs[id] = j.Allocated.Clone()
		ns := p.namespaces[j.Namespace]
		if ns == nil {
			ns = &api.Resource{}
			p.namespaces[j.Namespace] = ns
		}
		ns.Add(j.Allocated)
	}
}

// OnSessionClose drops the cycle's state.
func (p *Plugin) OnSessionClose(*framework.Session) {
	p.jobs, p.namespaces, p.total = nil, nil, nil
}

// JobOrder puts the job with the smaller dominant share first.
func (p *Plugin) JobOrder(l, r *api.JobInfo) int {
	return compare(p.share(p.jobs[l.UID]), p.share(p.jobs[r.UID]))
}

// NamespaceOrder puts the namespace with the smaller dominant share first.
func (p *Plugin) NamespaceOrder(l, r string) int {
	return compare(p.share(p.namespaces[l]), p.share(p.namespaces[r]))
}

func (p *Plugin) share(r *api.Resource) float64 {
	if r == nil {
		return 0
	}
	return r.Share(p.total)
}

// OnAllocate adds a placement to its job's and namespace's allocation.
func (p *Plugin) OnAllocate(t *api.TaskInfo) { p.account(t, true) }

// OnDeallocate removes an undone placement.
func (p *Plugin) OnDeallocate(t *api.TaskInfo) { p.account(t, false) }

func (p *Plugin) account(t *api.TaskInfo, add bool) {
	for _, r := range []*api.Resource{p.jobs[t.Job], p.namespaces[t.Namespace]} {
		if r == nil {
			continue
		}
		if add {
			r.Add(t.Resreq)
		} else {
			r.Sub(t.Resreq)
		}
	}
}

func compare(l, r float64) int {
	switch {
	case l < r:
		return -1
	case l > r:
		return 1
	}
	return 0
}
