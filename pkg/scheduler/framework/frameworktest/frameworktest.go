// Package frameworktest opens scheduling sessions for the tests of the
// actions: the plugins of a tier built from their factories, and a sink
// that records what a cycle binds and evicts.
package frameworktest

import (
	"slices"
	"testing"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Recorder is a session's bind and evict sink: it records each bind as
// "task@node" and each eviction by the task's name, in order.
type Recorder struct{ Binds, Evictions []string }

// Bind records a placement.
func (r *Recorder) Bind(t *api.TaskInfo, node string) { r.Binds = append(r.Binds, t.Name+"@"+node) }

// Evict records an eviction.
func (r *Recorder) Evict(t *api.TaskInfo, _ string) { r.Evictions = append(r.Evictions, t.Name) }

// Tier is one tier of the plugins the factories build with handle h (an
// empty handle when nil), in the factories' order.
func Tier(t testing.TB, h *framework.Handle, factories ...framework.PluginFactory) framework.Tier {
	t.Helper()
	if h == nil {
		h = &framework.Handle{}
	}
	var tier framework.Tier
	for _, f := range factories {
		p, err := f(nil, h)
		if err != nil {
			t.Fatal(err)
		}
		tier.Plugins = append(tier.Plugins, framework.TierPlugin{Plugin: p})
	}
	return tier
}

// Open opens a session over snap with the tiers and options o, its binds
// and evictions going to a new Recorder; the session is closed when t
// ends.
func Open(t testing.TB, snap *api.Snapshot, tiers []framework.Tier, o framework.Options) (*framework.Session, *Recorder) {
	t.Helper()
	r := &Recorder{}
	o.Sink, o.Evictor = r, r
	ssn := framework.OpenSession(t.Context(), snap, tiers, o)
	t.Cleanup(ssn.Close)
	return ssn, r
}

// Run runs action a for one cycle over snap and returns what it bound and
// evicted, the evictions sorted by name.
func Run(t testing.TB, snap *api.Snapshot, tiers []framework.Tier, o framework.Options, a framework.Action) *Recorder {
	t.Helper()
	r := &Recorder{}
	o.Sink, o.Evictor = r, r
	ssn := framework.OpenSession(t.Context(), snap, tiers, o)
	a.Execute(ssn)
	ssn.Close()
	slices.Sort(r.Evictions)
	return r
}
