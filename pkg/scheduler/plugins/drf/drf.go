// Package drf orders jobs, and namespaces, by dominant resource share
// (Dominant Resource Fairness): the job holding the smallest largest
// fraction of any cluster resource goes first.
package drf

import (
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "drf"

// Plugin is the drf plugin. Shares are of the cluster's allocatable
// resources and follow the cycle's placements: a job's from its Allocated,
// a namespace's from the snapshot's totals and the placements since.
type Plugin struct {
	totals *api.Totals
	// namespaces holds the allocation of the namespaces a placement of
	// the cycle touched.
	namespaces map[string]*api.Resource
}

var (
	_ framework.SessionPlugin        = &Plugin{}
	_ framework.JobOrderPlugin       = &Plugin{}
	_ framework.NamespaceOrderPlugin = &Plugin{}
	_ framework.EventHandlerPlugin   = &Plugin{}
)

// New builds the plugin; it takes no arguments.
var New = framework.NoArgs(Name, func() framework.Plugin { return &Plugin{} })

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen takes the cycle's totals.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	p.totals = ssn.Snapshot.Totals()
	p.namespaces = map[string]*api.Resource{}
}

// OnSessionClose drops the cycle's state.
func (p *Plugin) OnSessionClose(*framework.Session) {
	p.namespaces, p.totals = nil, nil
}

// JobOrder puts the job with the smaller dominant share first. A job's
// Allocated follows the cycle's placements and evictions.
func (p *Plugin) JobOrder(l, r *api.JobInfo) int {
	return compare(l.Allocated.Share(p.totals.Allocatable), r.Allocated.Share(p.totals.Allocatable))
}

// NamespaceOrder puts the namespace with the smaller dominant share first.
func (p *Plugin) NamespaceOrder(l, r string) int {
	return compare(p.namespace(l).Share(p.totals.Allocatable), p.namespace(r).Share(p.totals.Allocatable))
}

// namespace is the namespace's allocation: as the cycle began, followed
// through the cycle's placements and evictions once one touched it.
func (p *Plugin) namespace(ns string) *api.Resource {
	if r := p.namespaces[ns]; r != nil {
		return r
	}
	return p.totals.Namespace(ns)
}

// OnAllocate adds a placement to its job's and namespace's allocation.
func (p *Plugin) OnAllocate(t *api.TaskInfo) { p.account(t, true) }

// OnDeallocate removes an undone placement.
func (p *Plugin) OnDeallocate(t *api.TaskInfo) { p.account(t, false) }

func (p *Plugin) account(t *api.TaskInfo, add bool) {
	r := p.namespaces[t.Namespace]
	if r == nil {
		r = p.totals.Namespace(t.Namespace).Clone()
		p.namespaces[t.Namespace] = r
	}
	if add {
		r.Add(t.Resreq)
	} else {
		r.Sub(t.Resreq)
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
