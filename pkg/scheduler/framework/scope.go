package framework

import (
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// Domain is a set of nodes a job may be placed within as a whole: a
// HyperNode of the network topology, say.
type Domain struct {
	// Name identifies the domain in explanations and memos.
	Name string
	// Tier is the domain's network tier (0 for a single node).
	Tier  int32
	Nodes []*api.NodeInfo
}

// Domains is what a topology plugin says about a job.
type Domains struct {
	// List holds the domains to try, in order, the job placed whole within
	// one of them.
	List []*Domain
	// Hard: the job may only be placed within one of them; otherwise it
	// may be placed anywhere once none holds it.
	Hard bool
	// Why explains a hard constraint that no domain can meet, nil when
	// domains were found.
	Why *Reason
}

// TopologyPlugin says where a job with a network topology constraint may
// be placed. nil means the job has no constraint for this plugin. With
// evicting, the job may make room by evicting others, so domains without
// room enough now are given too.
type TopologyPlugin interface {
	Plugin
	Domains(job *api.JobInfo, evicting bool) *Domains
	// SubGroupDomains is Domains for one sub-group of the job, its
	// domains' nodes limited to within (every node when nil): the job's
	// own domain, when it has one. nil means the sub-group has no
	// constraint.
	SubGroupDomains(job *api.JobInfo, g *api.SubGroup, within *Domain, evicting bool) *Domains
}

// Domains asks the first enabled topology plugin about the job; nil when
// none constrains it.
func (ssn *Session) Domains(job *api.JobInfo, evicting bool) *Domains {
	for _, tier := range ssn.topology {
		for _, p := range tier {
			if d := p.Domains(job, evicting); d != nil {
				return d
			}
		}
	}
	return nil
}

// SubGroupDomains asks the first enabled topology plugin about a
// sub-group of the job, within the current scope; nil when none
// constrains it.
func (ssn *Session) SubGroupDomains(job *api.JobInfo, g *api.SubGroup, evicting bool) *Domains {
	for _, tier := range ssn.topology {
		for _, p := range tier {
			if d := p.SubGroupDomains(job, g, ssn.scope, evicting); d != nil {
				return d
			}
		}
	}
	return nil
}

// TryInDomains calls try with the search scope narrowed to each of d's
// domains in turn, restoring the scope after each, until try reports it
// is done; when d is soft and none was, it calls try once more in the
// scope it started in. It reports whether a call within a domain was
// done.
func (ssn *Session) TryInDomains(d *Domains, try func() (done bool)) bool {
	outer := ssn.scope
	for _, dom := range d.List {
		ssn.scope = dom
		done := try()
		ssn.scope = outer
		if done {
			return true
		}
	}
	if !d.Hard {
		try()
	}
	return false
}

// CurrentScope is the domain searches are restricted to, nil for none.
func (ssn *Session) CurrentScope() *Domain { return ssn.scope }

// Scope restricts node searches (FindNode, Candidates) to a domain's
// nodes until Unscope; nil searches every node.
func (ssn *Session) Scope(d *Domain) {
	ssn.scope = d
}

// Unscope lifts the restriction Scope set.
func (ssn *Session) Unscope() { ssn.scope = nil }

// SearchNodes returns the nodes searches look at: the scope's, or every
// node in name order.
func (ssn *Session) SearchNodes() []*api.NodeInfo {
	if ssn.scope != nil {
		return ssn.scope.Nodes
	}
	return ssn.Snapshot.NodeList
}

// ScopeName names the scope, "" when there is none.
func (ssn *Session) ScopeName() string {
	if ssn.scope == nil {
		return ""
	}
	return ssn.scope.Name
}

// scopeKey distinguishes memos made within a scope.
func (ssn *Session) scopeKey() string {
	if ssn.scope == nil {
		return ""
	}
	return "\x00@" + ssn.scope.Name
}

type subGroups struct {
	policies []*api.SubGroupPolicy
	err      error
}

// SubGroups returns the job's sub-groups (api.SubGroupsOf), worked out
// once per cycle: a job's tasks do not change within one, and the
// sub-groups hold the tasks themselves, so their statuses are current.
func (ssn *Session) SubGroups(job *api.JobInfo) ([]*api.SubGroupPolicy, error) {
	if job.PodGroup == nil || len(job.PodGroup.Spec.SubGroupPolicy) == 0 {
		return nil, nil
	}
	if c, ok := ssn.subGroups[job.UID]; ok {
		return c.policies, c.err
	}
	p, err := api.SubGroupsOf(job)
	if ssn.subGroups == nil {
		ssn.subGroups = map[api.JobID]subGroups{}
	}
	ssn.subGroups[job.UID] = subGroups{policies: p, err: err}
	return p, err
}
