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
