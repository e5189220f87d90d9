// Package dispatch decides which held work the federation releases, and
// to which member cluster, from a snapshot of the member clusters, the
// global queues and the bindings. It is pure: the dispatcher builds the
// snapshot from the Karmada API server and places the bindings released
// in their members; the simulator and the tests call it directly.
//
// Queues go in order of priority, then of their weighted dominant share of
// the federation's capacity (the sum of Ready clusters' allocatable), the
// least served first; jobs within a queue by priority, then age. A job is
// released only when
//
//   - its queue stays within its capability, counting every job released
//     and not yet finished;
//   - the queues' guarantees that are still unmet stay free across the
//     federation;
//   - one Ready cluster it may go to holds it whole now: allocatable minus
//     allocated, minus allocating, minus what was released there (or
//     planned there) that the cluster does not report yet.
//
// A released job its cluster refused to apply for long enough (Refused)
// holds nothing: it counts against neither its queue nor the cluster.
//
// A job that cannot be released does not stop the jobs behind it; once it
// has waited longer than the configured wait, it reserves the cluster that
// comes closest to holding it, and no job behind it is released there
// until it fits.
package dispatch

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Cluster is a member cluster.
type Cluster struct {
	Name  string
	Ready bool
	// Allocatable, Allocated and Allocating are the cluster's resource
	// summary.
	Allocatable, Allocated, Allocating Resources
}

// Queue is a global queue.
type Queue struct {
	Name     string
	Priority int32
	// Weight scales the queue's fair share; at least 1.
	Weight int32
	// Capability caps what the queue's released jobs may hold; nil
	// resources are unlimited.
	Capability Resources
	// Guarantee is kept free for the queue while it holds less.
	Guarantee Resources
	// Closed queues release nothing.
	Closed bool
}

// Component is one kind of replica of a job.
type Component struct {
	Name     string
	Replicas int32
	// Request is one replica's.
	Request Resources
}

// Binding is a job waiting for, or given, release.
type Binding struct {
	// ID is namespace/name of the binding.
	ID       string
	Queue    string
	Priority int32
	Created  time.Time
	// Components are all the job's kinds of replica.
	Components []Component
	// Clusters, when not nil, are the only clusters the job may go to
	// (none when empty).
	Clusters []string
	// Released: placed in a member by the dispatcher, or handed to
	// Karmada's scheduler.
	Released bool
	// Cluster is the member it is placed in, once it is ("" before).
	Cluster string
	// Reported: the cluster's resource summary counts it already (its
	// pods are allocated or allocating there).
	Reported bool
	// Finished: it holds nothing any more.
	Finished bool
	// Refused: released, and its cluster has refused to apply it for
	// longer than the caller's grace (its admission said no). It holds
	// nothing there and counts against neither its queue nor the
	// cluster, until the cluster takes it.
	Refused bool
	// HeldSince is when the dispatcher first held it (zero: not yet).
	HeldSince time.Time
	// Gang names the jobs released together (the children of a HyperJob);
	// "" for none. GangSize is how many jobs the gang has and GangMin how
	// many of them must be released, counting those released already, for
	// any to be (0: all).
	Gang     string
	GangSize int
	GangMin  int
	// Preferred are clusters tried before the others (where its data is).
	Preferred []string
	// Blocked, when set, holds the job whatever else allows (its data's
	// location is not known yet).
	Blocked *Hold
}

// Request is the whole job's request: every component's replicas.
func (b *Binding) Request() Resources {
	out := Resources{}
	for _, c := range b.Components {
		out.Add(c.Request.Times(int64(c.Replicas)))
	}
	return out
}

// Snapshot is the input of a decision.
type Snapshot struct {
	Clusters []Cluster
	Queues   []Queue
	Bindings []*Binding
	// Planned maps released bindings not yet placed by Karmada to the
	// cluster the dispatcher counted them against.
	Planned map[string]string
	Now     time.Time
}

// Options tune decisions.
type Options struct {
	// StarvationWait is how long a job may be passed over before it
	// reserves capacity; 0 never.
	StarvationWait time.Duration
	// OmitMessages leaves every Hold's Message empty, for callers that
	// act on the decisions alone (the simulator): formatting the numbers
	// of every held job at every decision is most of a decision's cost.
	OmitMessages bool
}

// The dispatcher's marks on a Karmada ResourceBinding, which the dashboard
// reads too.
const (
	// QueueOfBindingAnnotation records on a suspended binding the queue its
	// work belongs to (the binding webhook writes it).
	QueueOfBindingAnnotation = "dispatch.caldera.sh/queue"
	// HeldSinceAnnotation records on a binding when the dispatcher first
	// held it (RFC 3339), so that a restart keeps the clock.
	HeldSinceAnnotation = "dispatch.caldera.sh/held-since"
)

// Rule names why a job is held.
type Rule string

// Rules.
const (
	RuleQueueNotFound  Rule = "QueueNotFound"
	RuleQueueClosed    Rule = "QueueClosed"
	RuleCapability     Rule = "QueueCapability"
	RuleGuarantee      Rule = "QueueGuarantee"
	RuleNoClusterFits  Rule = "NoClusterFits"
	RuleReserved       Rule = "CapacityReserved"
	RuleNoReadyCluster Rule = "NoReadyCluster"
	RuleGang           Rule = "GangShortfall"
	RuleData           Rule = "DataNotResolved"
)

// Hold is why a job stays held.
type Hold struct {
	Rule    Rule
	Message string
	// Reserving: the job has waited long enough to reserve Cluster.
	Reserving bool
	Cluster   string
}

// Release is a job to release, with the cluster it was counted against.
type Release struct {
	ID      string
	Cluster string
}

// Decision is what to do.
type Decision struct {
	// Releases are in the order decided.
	Releases []Release
	// Holds are the jobs still held and why.
	Holds map[string]Hold
}

// state is the running account of a decision.
type state struct {
	s        *Snapshot
	opts     Options
	capacity Resources
	free     map[string]Resources // per Ready cluster
	ready    []string
	used     map[string]Resources // per queue
	queues   map[string]*Queue
	// reserved holds, per cluster, the job reserving it.
	reserved map[string]string
	// requests caches each job's request.
	requests map[*Binding]Resources
	// gangs are the gangs of the snapshot.
	gangs map[string]*gang
}

// request is the job's whole request, worked out once.
func (st *state) request(b *Binding) Resources {
	r, ok := st.requests[b]
	if !ok {
		r = b.Request()
		st.requests[b] = r
	}
	return r
}

// Decide works out which held jobs to release now.
func Decide(s *Snapshot, opts Options) Decision {
	st := newState(s, opts)
	d := Decision{Holds: map[string]Hold{}}

	// Pending jobs per queue, in job order.
	pending := map[string][]*Binding{}
	for _, b := range s.Bindings {
		if b.Released || b.Finished {
			continue
		}
		if _, ok := st.queues[b.Queue]; !ok {
			d.Holds[b.ID] = Hold{Rule: RuleQueueNotFound, Message: st.msg("queue %q does not exist", b.Queue)}
			continue
		}
		pending[b.Queue] = append(pending[b.Queue], b)
	}
	for _, jobs := range pending {
		slices.SortFunc(jobs, func(a, b *Binding) int {
			return cmp.Or(cmp.Compare(b.Priority, a.Priority), a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
		})
	}
	if len(st.ready) == 0 {
		for _, jobs := range pending {
			for _, b := range jobs {
				d.Holds[b.ID] = Hold{Rule: RuleNoReadyCluster, Message: st.msg("no member cluster is Ready")}
			}
		}
		return d
	}

	// Jobs passed over for longer than the wait go first, longest waiting
	// first: released if they fit, else reserving their closest cluster.
	decided := map[string]bool{}
	if opts.StarvationWait > 0 {
		var starved []*Binding
		for _, jobs := range pending {
			for _, b := range jobs {
				if !b.HeldSince.IsZero() && s.Now.Sub(b.HeldSince) >= opts.StarvationWait {
					starved = append(starved, b)
				}
			}
		}
		slices.SortFunc(starved, func(a, b *Binding) int {
			return cmp.Or(a.HeldSince.Compare(b.HeldSince), strings.Compare(a.ID, b.ID))
		})
		for _, b := range starved {
			if decided[b.ID] {
				continue
			}
			st.decide(b, &d, decided)
		}
	}

	// Round by round, the least served queue (by priority, then weighted
	// share) offers its next job; a queue whose jobs are all decided
	// drops out.
	next := map[string]int{}
	active := make([]string, 0, len(pending))
	for q := range pending {
		active = append(active, q)
	}
	for len(active) > 0 {
		slices.SortFunc(active, st.queueOrder)
		qn := active[0]
		jobs := pending[qn]
		b := jobs[next[qn]]
		next[qn]++
		if next[qn] == len(jobs) {
			active = active[1:]
		}
		if decided[b.ID] {
			continue
		}
		st.decide(b, &d, decided)
	}
	return d
}

// decide releases or holds the job, and with it the rest of its gang.
func (st *state) decide(b *Binding, d *Decision, decided map[string]bool) {
	if b.Gang == "" {
		decided[b.ID] = true
		if h, ok := st.try(b); ok {
			d.Releases = append(d.Releases, Release{ID: b.ID, Cluster: h.Cluster})
		} else {
			d.Holds[b.ID] = h
		}
		return
	}
	g := st.gangs[b.Gang]
	for _, m := range g.pending {
		decided[m.ID] = true
	}
	need := g.size
	if g.min > 0 {
		need = min(g.min, g.size)
	}
	holdAll := func(msg string) {
		for _, m := range g.pending {
			d.Holds[m.ID] = Hold{Rule: RuleGang, Message: msg}
		}
	}
	if present := len(g.pending) + g.released; present < g.size {
		holdAll(st.msg("%d of the %d jobs of gang %s exist yet", present, g.size, b.Gang))
		return
	}
	// All or enough at once: tried on a copy of the account, kept only if
	// enough fit.
	saved := st.save()
	var releases []Release
	holds := map[string]Hold{}
	var firstHeld *Binding
	for _, m := range g.pending {
		if _, ok := st.queues[m.Queue]; !ok {
			holds[m.ID] = Hold{Rule: RuleQueueNotFound, Message: st.msg("queue %q does not exist", m.Queue)}
			if firstHeld == nil {
				firstHeld = m
			}
			continue
		}
		if h, ok := st.try(m); ok {
			releases = append(releases, Release{ID: m.ID, Cluster: h.Cluster})
		} else {
			h.Reserving, h.Cluster = false, ""
			holds[m.ID] = h
			if firstHeld == nil {
				firstHeld = m
			}
		}
	}
	if fit := g.released + len(releases); fit < need {
		st.restore(saved)
		holdAll(st.msg("%d of the %d jobs of gang %s fit now, %d needed; %s: %s",
			fit, g.size, b.Gang, need, firstHeld.ID, holds[firstHeld.ID].Message))
		return
	}
	d.Releases = append(d.Releases, releases...)
	for id, h := range holds {
		d.Holds[id] = h
	}
}

// gang is what a decision knows of one gang.
type gang struct {
	size, min, released int
	// pending are its held jobs, by ID.
	pending []*Binding
}

// account is a copy of what releases change.
type account struct {
	free, used map[string]Resources
	reserved   map[string]string
}

func (st *state) save() account {
	a := account{free: make(map[string]Resources, len(st.free)), used: make(map[string]Resources, len(st.used)), reserved: make(map[string]string, len(st.reserved))}
	for k, v := range st.free {
		a.free[k] = v.Clone()
	}
	for k, v := range st.used {
		a.used[k] = v.Clone()
	}
	for k, v := range st.reserved {
		a.reserved[k] = v
	}
	return a
}

func (st *state) restore(a account) {
	st.free, st.used, st.reserved = a.free, a.used, a.reserved
}

func newState(s *Snapshot, opts Options) *state {
	st := &state{
		s: s, opts: opts, capacity: Resources{}, free: map[string]Resources{},
		used: map[string]Resources{}, queues: map[string]*Queue{}, reserved: map[string]string{},
		requests: map[*Binding]Resources{}, gangs: map[string]*gang{},
	}
	for _, b := range s.Bindings {
		if b.Gang == "" {
			continue
		}
		g := st.gangs[b.Gang]
		if g == nil {
			g = &gang{size: b.GangSize, min: b.GangMin}
			st.gangs[b.Gang] = g
		}
		switch {
		case b.Released:
			g.released++
		case !b.Finished:
			g.pending = append(g.pending, b)
		}
	}
	for _, g := range st.gangs {
		// A gang that does not say its size is the jobs it has.
		g.size = max(g.size, g.released+len(g.pending))
		slices.SortFunc(g.pending, func(a, b *Binding) int { return strings.Compare(a.ID, b.ID) })
	}
	for i := range s.Queues {
		q := &s.Queues[i]
		st.queues[q.Name] = q
		st.used[q.Name] = Resources{}
	}
	for _, c := range s.Clusters {
		if !c.Ready {
			continue
		}
		st.ready = append(st.ready, c.Name)
		st.capacity.Add(c.Allocatable)
		st.free[c.Name] = c.Allocatable.Clone().Sub(c.Allocated).Sub(c.Allocating)
	}
	slices.Sort(st.ready)
	// Released work counts, without a request map per job: there are
	// many more released jobs than held ones.
	for _, b := range s.Bindings {
		if !b.Released || b.Finished || b.Refused {
			continue
		}
		u, counted := st.used[b.Queue]
		// Released and not yet counted by its cluster: count it there.
		var f Resources
		if !b.Reported {
			target := b.Cluster
			if target == "" {
				target = s.Planned[b.ID]
			}
			f = st.free[target]
		}
		for _, c := range b.Components {
			if counted {
				u.AddTimes(c.Request, int64(c.Replicas))
			}
			if f != nil {
				f.AddTimes(c.Request, -int64(c.Replicas))
			}
		}
	}
	return st
}

// queueOrder: higher priority first, then the smaller weighted dominant
// share of the federation's capacity, then name.
func (st *state) queueOrder(a, b string) int {
	qa, qb := st.queues[a], st.queues[b]
	if c := cmp.Compare(qb.Priority, qa.Priority); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(st.share(qa), st.share(qb)), strings.Compare(a, b))
}

func (st *state) share(q *Queue) float64 {
	w := max(q.Weight, 1)
	return st.used[q.Name].Share(st.capacity) / float64(w)
}

// try releases the job if every rule allows it, updating the account.
func (st *state) try(b *Binding) (Hold, bool) {
	if b.Blocked != nil {
		return *b.Blocked, false
	}
	q := st.queues[b.Queue]
	req := st.request(b)
	if q.Closed {
		return Hold{Rule: RuleQueueClosed, Message: st.msg("queue %q is closed", q.Name)}, false
	}
	if len(q.Capability) > 0 && overCapability(st.used[q.Name], req, q.Capability) {
		after := st.used[q.Name].Clone().Add(req)
		return Hold{Rule: RuleCapability, Message: st.msg(
			"queue %q would hold %s, over its capability by %s", q.Name, restrict(after, q.Capability), after.Over(q.Capability))}, false
	}
	if h, ok := st.guarantees(q, req); !ok {
		return h, false
	}

	var best string
	bestShortShare := -1.0
	for _, name := range st.allowed(b) {
		free := st.free[name]
		if owner, ok := st.reserved[name]; ok && owner != b.ID {
			continue
		}
		if req.Fits(free) {
			st.free[name].Sub(req)
			st.used[q.Name].Add(req)
			if st.reserved[name] == b.ID {
				delete(st.reserved, name)
			}
			return Hold{Cluster: name}, true
		}
		if s := shortShare(req, free); best == "" || s < bestShortShare {
			best, bestShortShare = name, s
		}
	}
	h := Hold{Rule: RuleNoClusterFits}
	switch {
	case best == "" && len(st.reservedAmong(b)) > 0:
		h.Rule = RuleReserved
		h.Message = st.msg("the clusters that could hold the job (%s) are reserved for jobs waiting longer", strings.Join(st.reservedAmong(b), ", "))
		return h, false
	case best == "":
		h.Message = st.msg("no Ready cluster is one the job's placement allows")
		return h, false
	}
	h.Message = st.msg("no Ready cluster has %s free for the job; %s comes closest, short of %s", req, best, req.Short(st.free[best]))
	if st.opts.StarvationWait > 0 && !b.HeldSince.IsZero() && st.s.Now.Sub(b.HeldSince) >= st.opts.StarvationWait {
		if _, taken := st.reserved[best]; !taken {
			st.reserved[best] = b.ID
			h.Reserving, h.Cluster = true, best
			h.Message += st.msg("; waiting since %s, it reserves %s", b.HeldSince.UTC().Format(time.RFC3339), best)
		}
	}
	return h, false
}

// msg formats a hold's message, unless the caller omits them.
func (st *state) msg(format string, args ...any) string {
	if st.opts.OmitMessages {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

// guarantees checks that releasing req for q leaves the other queues'
// unmet guarantees free across the federation.
func (st *state) guarantees(q *Queue, req Resources) (Hold, bool) {
	owed := Resources{}
	for _, o := range st.s.Queues {
		if o.Name == q.Name || len(o.Guarantee) == 0 {
			continue
		}
		for k, g := range o.Guarantee {
			if left := g - st.used[o.Name][k]; left > 0 {
				owed[k] += left
			}
		}
	}
	if len(owed) == 0 {
		return Hold{}, true
	}
	free := Resources{}
	for _, f := range st.free {
		for k, v := range f {
			if v > 0 {
				free[k] += v
			}
		}
	}
	need := owed.Clone().Add(req)
	for k := range owed {
		if need[k] > free[k] {
			return Hold{Rule: RuleGuarantee, Message: st.msg(
				"releasing the job would leave less free than other queues are guaranteed (%s still owed)", owed)}, false
		}
	}
	return Hold{}, true
}

// allowed lists the Ready clusters the job may go to: its preferred ones
// first, then by name.
func (st *state) allowed(b *Binding) []string {
	if b.Clusters == nil && len(b.Preferred) == 0 {
		return st.ready
	}
	var first, rest []string
	for _, name := range st.ready {
		switch {
		case b.Clusters != nil && !slices.Contains(b.Clusters, name):
		case slices.Contains(b.Preferred, name):
			first = append(first, name)
		default:
			rest = append(rest, name)
		}
	}
	return append(first, rest...)
}

// reservedAmong lists the clusters the job may go to that others reserve.
func (st *state) reservedAmong(b *Binding) []string {
	var out []string
	for _, name := range st.allowed(b) {
		if owner, ok := st.reserved[name]; ok && owner != b.ID {
			out = append(out, name)
		}
	}
	return out
}

// overCapability reports whether used plus req passes a capability.
func overCapability(used, req, capability Resources) bool {
	for k, c := range capability {
		if used[k]+req[k] > c {
			return true
		}
	}
	return false
}

// shortShare is the largest share of req that free lacks.
func shortShare(req, free Resources) float64 {
	s := 0.0
	for k, v := range req {
		if v > 0 && v > free[k] {
			s = max(s, float64(v-free[k])/float64(v))
		}
	}
	return s
}

// restrict keeps the resources limit names.
func restrict(r, limit Resources) Resources {
	out := Resources{}
	for k := range limit {
		out[k] = r[k]
	}
	return out
}
