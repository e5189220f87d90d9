// Package victims is what the preempt and reclaim actions share: for a task
// that fits no node, the node where evicting the fewest and least important
// running tasks makes room, and the transaction that places a whole job
// that way. The two actions differ only in their Policy: which running
// tasks they may consider and which plugins narrow them.
//
// Gangs are treated whole: taking a task from a running job that would
// leave it short of its minAvailable evicts every placed task of that job,
// on every node (the job could not run on with part of its gang), and such
// a choice costs the whole gang when nodes are compared.
package victims

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Policy says which tasks an action may evict.
type Policy struct {
	// Eligible reports whether v, a running task of victimJob, may be
	// considered at all for a task of preemptor.
	Eligible func(preemptor, victimJob *api.JobInfo, v *api.TaskInfo) bool
	// Narrow asks the plugins: Session.Preemptable or Session.Reclaimable.
	Narrow func(preemptor *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo
	// Distance, if set, ranks victims by how far they are from the
	// preemptor (reclaim: how far up the queue tree their queue parts from
	// the reclaimer's); nearer victims are taken first and a node whose
	// victims are all near beats one that needs far ones.
	Distance func(preemptor, v *api.TaskInfo) int
	// NoVictims explains that no node has tasks the policy may evict for
	// a task.
	NoVictims func(t *api.TaskInfo) *framework.Reason
	// Candidates, given the number of nodes, is how many nodes where
	// evictions would make room are enough to choose from; nil means all.
	Candidates func(nodes int) int
}

// Choice is a node and the tasks to evict so that a task fits there.
type Choice struct {
	Node *api.NodeInfo
	// Victims in eviction order; tasks of gangs evicted whole may run on
	// other nodes.
	Victims []*api.TaskInfo
	// jobs is the number of jobs that lose tasks; top is the highest job
	// priority among the victims; distance the farthest victim's.
	jobs     int
	top      int32
	distance int
	// again counts victims whose jobs lost pods within the re-eviction
	// window already: the same work should not pay for every squeeze.
	again int
	// earliest is when the longest-running of the most important victims
	// started: the later, the less work is lost.
	earliest time.Time
	order    int
}

// better orders choices: nearest victims, then fewest jobs touched (one
// whole low-priority job before parts of several), then the least
// important victim at the top, then fewest victims of jobs just evicted
// from, then fewest victims, then the most recently started victims, then
// node order.
func (c *Choice) better(o *Choice) int {
	return cmp.Or(
		cmp.Compare(c.distance, o.distance),
		cmp.Compare(c.jobs, o.jobs),
		cmp.Compare(c.top, o.top),
		cmp.Compare(c.again, o.again),
		cmp.Compare(len(c.Victims), len(o.Victims)),
		o.earliest.Compare(c.earliest),
		cmp.Compare(c.order, o.order),
	)
}

// started is when a task's pod started running, else when it was created.
func started(t *api.TaskInfo) time.Time {
	if st := t.Pod.Status.StartTime; st != nil {
		return st.Time
	}
	return t.Pod.CreationTimestamp.Time
}

// Evictable reports whether a task can be evicted now: it holds resources
// on a node, is not already leaving, and no refused eviction holds it back.
func Evictable(t *api.TaskInfo, now time.Time) bool {
	return (t.Status == api.Running || t.Status == api.Bound) && !now.Before(t.NoEvictUntil)
}

// evictedLately reports whether some of the job's tasks were evicted
// within the re-eviction window, for whatever job.
func evictedLately(j *api.JobInfo, now time.Time) bool {
	for _, at := range j.EvictedBy {
		if now.Sub(at) < framework.ReEvictionWindow {
			return true
		}
	}
	return false
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// evictedRecently reports whether the preemptor lost tasks to the victim's
// job within the re-eviction window.
func evictedRecently(preemptor, victimJob *api.JobInfo, now time.Time) bool {
	at, ok := preemptor.EvictedBy[victimJob.UID]
	return ok && now.Sub(at) < framework.ReEvictionWindow
}

// Choose finds where evicting tasks the policy allows makes room for t, a
// task of job; nil when nowhere. Nodes are visited from start on, round the
// node list, until the policy's number of candidate nodes is found; next
// is where the following search should start. Candidates are compared by
// resources alone; the best is then checked with every predicate as if
// its victims were gone, and the next is tried when a constraint other
// than resources still rejects it.
func Choose(ssn *framework.Session, job *api.JobInfo, t *api.TaskInfo, p *Policy, start int) (c *Choice, next int) {
	nodes := ssn.SearchNodes()
	total := len(nodes)
	if total == 0 {
		return nil, 0
	}
	enough := total
	if p.Candidates != nil {
		enough = p.Candidates(total)
	}
	start %= total
	var choices []*Choice
	visited := 0
	for i := 0; i < total && len(choices) < enough; i++ {
		visited++
		n := nodes[(start+i)%total]
		if s := ssn.Predicate(t, n); s.Unresolvable() {
			continue
		}
		c := chooseOn(ssn, job, t, n, p)
		if c == nil {
			continue
		}
		c.order = i
		choices = append(choices, c)
	}
	next = (start + visited) % total
	slices.SortFunc(choices, (*Choice).better)
	for _, c := range choices {
		if ssn.PredicateWithout(t, c.Node, c.onNode()) == nil {
			return c, next
		}
	}
	return nil, next
}

// onNode returns the victims that run on the choice's node.
func (c *Choice) onNode() []*api.TaskInfo { return onNode(c.Victims, c.Node.Name) }

// onNode returns the victims that run on the node.
func onNode(victims []*api.TaskInfo, node string) []*api.TaskInfo {
	out := make([]*api.TaskInfo, 0, len(victims))
	for _, v := range victims {
		if v.NodeName == node {
			out = append(out, v)
		}
	}
	return out
}

// chooseOn picks victims on one node by resources: least important first,
// until t fits the room they and the node's future idle resources give.
func chooseOn(ssn *framework.Session, job *api.JobInfo, t *api.TaskInfo, n *api.NodeInfo, p *Policy) *Choice {
	room := n.FutureIdle()
	candidates, all := candidatesOn(ssn, job, n, p, room)
	if len(candidates) == 0 || !t.Resreq.LessEqual(all) {
		return nil
	}
	distance := func(v *api.TaskInfo) int {
		if p.Distance == nil {
			return 0
		}
		return p.Distance(t, v)
	}
	orderCandidates(ssn, candidates, distance)
	// Plugins that keep count (a queue must not fall below its share) see
	// the candidates in the order they would be taken.
	candidates = p.Narrow(t, candidates)
	if len(candidates) == 0 {
		return nil
	}
	s := &selection{
		c: &Choice{Node: n}, ssn: ssn, preemptor: job, t: t, p: p,
		room: room, distance: distance,
		chosen: map[api.TaskID]bool{}, taken: map[api.JobID]int32{},
		whole: map[api.JobID]bool{}, unbreakable: map[api.JobID]bool{},
	}
	// First the tasks their jobs can spare (beyond minAvailable), then, if
	// that is not room enough, whole gangs.
	s.takeSpare(candidates)
	spared := len(s.c.Victims)
	s.takeGangs(candidates)
	if len(s.c.Victims) > spared && s.fits() {
		s.keepSparedUnneeded(spared)
	}
	if len(s.c.Victims) == 0 || !s.fits() {
		return nil
	}
	// The plugins judged candidates node by node; the final set, with the
	// tasks of whole gangs elsewhere, must pass as one.
	if len(p.Narrow(t, s.c.Victims)) != len(s.c.Victims) {
		return nil
	}
	s.rank()
	return s.c
}

// candidatesOn returns the tasks on the node that the policy lets the
// preemptor's job consider, and the room the node would have with them
// all gone on top of room.
func candidatesOn(ssn *framework.Session, job *api.JobInfo, n *api.NodeInfo, p *Policy, room *api.Resource) (candidates []*api.TaskInfo, all *api.Resource) {
	jobs := ssn.Snapshot.Jobs
	all = room.Clone()
	for _, nt := range n.Tasks {
		vj := jobs[nt.Job]
		if vj == nil || vj.UID == job.UID {
			continue
		}
		// The job's copy of the task is the one statements change.
		v := vj.Tasks[nt.UID]
		if v == nil || !Evictable(v, ssn.Now) || !vj.TaskPreemptable(v) || !p.Eligible(job, vj, v) || evictedRecently(job, vj, ssn.Now) {
			continue
		}
		candidates = append(candidates, v)
		all.Add(v.Resreq)
	}
	return candidates, all
}

// orderCandidates sorts candidates in the order they would be taken:
// nearest, then least important first: lower job priority, then lower pod
// priority, then jobs not evicted from lately, then the most recently
// started, then by name.
func orderCandidates(ssn *framework.Session, candidates []*api.TaskInfo, distance func(*api.TaskInfo) int) {
	jobs := ssn.Snapshot.Jobs
	slices.SortFunc(candidates, func(a, b *api.TaskInfo) int {
		ja, jb := jobs[a.Job], jobs[b.Job]
		return cmp.Or(
			cmp.Compare(distance(a), distance(b)),
			cmp.Compare(ja.Priority, jb.Priority),
			cmp.Compare(a.Priority, b.Priority),
			compareBool(evictedLately(ja, ssn.Now), evictedLately(jb, ssn.Now)),
			started(b).Compare(started(a)),
			cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Name, b.Name),
		)
	})
}

// selection is the victims being taken on one node for task t of the
// preemptor job, and the room taking them leaves there.
type selection struct {
	c         *Choice
	ssn       *framework.Session
	preemptor *api.JobInfo
	t         *api.TaskInfo
	p         *Policy
	// room is the node's future idle resources with the victims on it gone.
	room     *api.Resource
	distance func(*api.TaskInfo) int
	chosen   map[api.TaskID]bool
	// taken counts the victims per job.
	taken map[api.JobID]int32
	// whole marks the jobs whose gangs go whole.
	whole map[api.JobID]bool
	// unbreakable jobs' gangs cannot be evicted whole (one of their tasks
	// may not go); only their tasks beyond minAvailable may.
	unbreakable map[api.JobID]bool
}

// fits reports whether the task fits the room made so far.
func (s *selection) fits() bool {
	return s.t.Resreq.LessEqual(s.room) && s.devicesFit(s.c.Victims)
}

// devicesFit reports whether a task with resource claims would find its
// devices on the node with the victims there gone. Only the predicates
// count devices (a victim's claims free them), so they are asked; a task
// without claims needs no devices.
func (s *selection) devicesFit(victims []*api.TaskInfo) bool {
	if s.t.Pod == nil || len(s.t.Pod.Spec.ResourceClaims) == 0 {
		return true
	}
	return s.ssn.PredicateWithout(s.t, s.c.Node, onNode(victims, s.c.Node.Name)) == nil
}

func (s *selection) take(v *api.TaskInfo) {
	s.c.Victims = append(s.c.Victims, v)
	s.chosen[v.UID] = true
	s.taken[v.Job]++
	if v.NodeName == s.c.Node.Name {
		s.room.Add(v.Resreq)
	}
	s.c.distance = max(s.c.distance, s.distance(v))
}

// spare reports whether the job can lose one more task and keep its gang.
func (s *selection) spare(vj *api.JobInfo) bool {
	return vj.PlacedCount()-s.taken[vj.UID]-1 >= vj.MinAvailable
}

// takeSpare takes, in order, the candidates their jobs can spare until the
// task fits.
func (s *selection) takeSpare(candidates []*api.TaskInfo) {
	for _, v := range candidates {
		if s.fits() {
			break
		}
		if s.spare(s.ssn.Snapshot.Jobs[v.Job]) {
			s.take(v)
		}
	}
}

// takeGangs takes, in order, the candidates not yet taken until the task
// fits: a task whose job can spare it alone, else its whole gang on every
// node, or nothing of that job when the gang may not go whole.
func (s *selection) takeGangs(candidates []*api.TaskInfo) {
	for _, v := range candidates {
		if s.fits() {
			break
		}
		if s.chosen[v.UID] {
			continue
		}
		vj := s.ssn.Snapshot.Jobs[v.Job]
		if s.whole[vj.UID] || s.spare(vj) {
			s.take(v)
			continue
		}
		if s.unbreakable[vj.UID] {
			continue
		}
		// Taking v breaks the gang: the whole gang goes, or v stays.
		rest, ok := restOfGang(vj, s.chosen, v, s.ssn.Now)
		if !ok || len(s.p.Narrow(s.t, rest)) != len(rest) || !allEligible(s.preemptor, vj, rest, s.p) {
			s.unbreakable[vj.UID] = true
			continue
		}
		s.whole[vj.UID] = true
		s.take(v)
		for _, o := range rest {
			s.take(o)
		}
	}
}

// keepSparedUnneeded lets the first spared victims stay, the most
// important first, where the whole gangs taken after them make room
// enough without them.
func (s *selection) keepSparedUnneeded(spared int) {
	for i := spared - 1; i >= 0; i-- {
		v := s.c.Victims[i]
		if s.whole[v.Job] {
			continue
		}
		without := s.room.Clone().Sub(v.Resreq)
		if s.t.Resreq.LessEqual(without) && s.devicesFit(slices.Delete(slices.Clone(s.c.Victims), i, i+1)) {
			s.room = without
			s.c.Victims = slices.Delete(s.c.Victims, i, i+1)
			s.taken[v.Job]--
			if s.taken[v.Job] == 0 {
				delete(s.taken, v.Job)
			}
		}
	}
}

// rank sets what Choice.better compares the choice by, besides its
// distance and victims.
func (s *selection) rank() {
	c, jobs := s.c, s.ssn.Snapshot.Jobs
	c.top = jobs[c.Victims[0].Job].Priority
	for _, v := range c.Victims {
		c.top = max(c.top, jobs[v.Job].Priority)
	}
	for _, v := range c.Victims {
		if st := started(v); jobs[v.Job].Priority == c.top && (c.earliest.IsZero() || st.Before(c.earliest)) {
			c.earliest = st
		}
		if evictedLately(jobs[v.Job], s.ssn.Now) {
			c.again++
		}
	}
	c.jobs = len(s.taken)
}

// restOfGang returns the job's other running tasks not yet chosen, in
// name order, on any node; ok is false when one of them cannot be evicted
// now, so the gang cannot go whole.
func restOfGang(job *api.JobInfo, chosen map[api.TaskID]bool, except *api.TaskInfo, now time.Time) (rest []*api.TaskInfo, ok bool) {
	for _, o := range job.Tasks {
		if o.UID == except.UID || chosen[o.UID] || (o.Status != api.Running && o.Status != api.Bound) {
			continue
		}
		if !Evictable(o, now) {
			return nil, false
		}
		rest = append(rest, o)
	}
	slices.SortFunc(rest, func(a, b *api.TaskInfo) int { return cmp.Compare(a.Name, b.Name) })
	return rest, true
}

func allEligible(preemptor, vj *api.JobInfo, tasks []*api.TaskInfo, p *Policy) bool {
	for _, o := range tasks {
		if !vj.TaskPreemptable(o) || !p.Eligible(preemptor, vj, o) {
			return false
		}
	}
	return true
}

// Search places jobs by evicting, for one action in one cycle. It
// remembers the kinds of job it failed to place, so that alike jobs are not
// tried again while the session stays as it was after the failure: a
// backlog of alike pending jobs costs one search, not one each.
type Search struct {
	ssn    *framework.Session
	policy *Policy
	// next is where the next node search starts, so that searches share
	// the work of looking over a large cluster.
	next int
	// failed holds, per kind of job, the session's state version a failed
	// attempt left it at (undone), and why it failed.
	failed map[string]failure
}

type failure struct {
	mutations uint64
	why       *framework.Reason
}

// NewSearch returns a search for the policy in this session.
func NewSearch(ssn *framework.Session, p *Policy) *Search {
	return &Search{ssn: ssn, policy: p, failed: map[string]failure{}}
}

// Gate says whether a task of the job may be placed now (queue capability,
// deserved share); a refusal carries the reason. It is asked right before
// each placement, after the evictions made for it.
type Gate func(t *api.TaskInfo) (bool, *framework.Reason)

// Result is what Place did for a job.
type Result struct {
	// Committed: the job's placements and evictions were committed.
	Committed bool
	// Victims are the tasks evicted (when committed) for the job.
	Victims []*api.TaskInfo
	// Blocked says why the job could not get its gang; nil when committed.
	Blocked *framework.Reason
}

// Place places the job's pending tasks, in task order, until the job has
// its gang: where no node fits a task, it evicts what Choose finds and
// pipelines the task onto the room being freed. The placements and
// evictions are one statement, committed only when the job then has its
// gang; otherwise nothing is evicted. reason describes an eviction for the
// victim's event.
func (s *Search) Place(job *api.JobInfo, gate Gate, reason func(preemptor *api.TaskInfo) string) Result {
	d := s.ssn.Domains(job, true)
	if d == nil {
		return s.place(job, gate, reason)
	}
	// A job with a network topology constraint makes room within one
	// domain at a time.
	var r Result
	if s.ssn.TryInDomains(d, func() bool {
		r = s.place(job, gate, reason)
		return r.Committed
	}) || !d.Hard {
		return r
	}
	why := d.Why
	if why == nil {
		why = framework.Reasonf("TopologyConstraint", "evicting pods in any one of the %d network domains the job may use would not make room for its gang", len(d.List))
	}
	return Result{Blocked: why.Of(framework.KindTopology)}
}

func (s *Search) place(job *api.JobInfo, gate Gate, reason func(preemptor *api.TaskInfo) string) Result {
	ssn := s.ssn
	tasks := make([]*api.TaskInfo, 0, int(job.CountIn(api.Pending)))
	for t := range job.TasksIn(api.Pending) {
		if !t.BestEffort {
			tasks = append(tasks, t)
		}
	}
	ssn.SortTasks(tasks)
	policies, err := ssn.SubGroups(job)
	if err != nil {
		return Result{Blocked: framework.Reasonf("InvalidSubGroupPolicy", "%v", err).Of(framework.KindJob)}
	}
	key, remember := s.key(job, tasks)
	remember = remember && len(policies) == 0
	if f, ok := s.failed[key]; remember && ok && f.mutations == ssn.StateVersion() {
		return Result{Blocked: f.why}
	}
	stmt := ssn.NewStatement()
	var victims []*api.TaskInfo
	var blocked *framework.Reason
	// Sub-groups first, each whole within one of its network domains,
	// while the job is short of its gang; then the job's other tasks.
	var subBlocked *framework.Reason
	grouped := map[api.TaskID]bool{}
	for _, p := range policies {
		for _, g := range p.Groups {
			for _, t := range g.Tasks {
				grouped[t.UID] = true
			}
			if blocked != nil || !ssn.JobStarving(job) {
				continue
			}
			v, why, gated := s.placeSubGroup(job, g, stmt, gate, reason)
			victims = append(victims, v...)
			switch {
			case gated:
				blocked = why
			case subBlocked == nil:
				subBlocked = why
			}
		}
	}
	if blocked == nil {
		rest := tasks[:0:0]
		for _, t := range tasks {
			if !grouped[t.UID] {
				rest = append(rest, t)
			}
		}
		var v []*api.TaskInfo
		v, blocked, _ = s.placeTasks(job, rest, stmt, false, gate, reason)
		victims = append(victims, v...)
	}
	if blocked == nil {
		blocked = subBlocked
	}
	if !ssn.JobStarving(job) && (ssn.JobReady(job) || ssn.JobPipelined(job)) {
		if !stmt.Commit() {
			// The room was taken since the snapshot (the outcome says
			// so); the job is tried again in the next cycle.
			return Result{Blocked: framework.Reasonf("Conflict", "the room was taken since the snapshot; tried again")}
		}
		if len(victims) > 0 {
			ssn.Block(job.UID, pending(victims))
		}
		return Result{Committed: true, Victims: victims}
	}
	stmt.Discard()
	if blocked == nil {
		blocked = framework.Reasonf("GangShortfall", "the job's tasks do not make up its gang")
	}
	if remember {
		s.failed[key] = failure{mutations: ssn.StateVersion(), why: blocked}
	}
	return Result{Blocked: blocked}
}

// placeTasks places the tasks in order into stmt, making room where none
// fits: until the job is no longer starving, or with all set, every one.
// It returns the victims, why a task could not be placed, and gate set
// when the queue refused a task.
func (s *Search) placeTasks(job *api.JobInfo, tasks []*api.TaskInfo, stmt *framework.Statement, all bool, gate Gate, reason func(preemptor *api.TaskInfo) string) (victims []*api.TaskInfo, blocked *framework.Reason, gated bool) {
	ssn := s.ssn
	for _, t := range tasks {
		if !all && !ssn.JobStarving(job) {
			break
		}
		if node, future, _ := ssn.FindNode(t); node != nil {
			if blocked = admit(gate, t); blocked != nil {
				return victims, blocked, true
			}
			var err error
			if future {
				err = stmt.Pipeline(t, node)
			} else {
				err = stmt.Allocate(t, node)
			}
			if err != nil {
				return victims, internalError(ssn, err, t), false
			}
			continue
		}
		var c *Choice
		c, s.next = Choose(ssn, job, t, s.policy, s.next)
		if c == nil {
			return victims, s.policy.NoVictims(t).Of(framework.KindPreemption), false
		}
		why := reason(t)
		for _, v := range c.Victims {
			if err := stmt.Evict(v, job.UID, why); err != nil {
				return victims, internalError(ssn, err, v), false
			}
		}
		// The queue is judged with the victims gone: preemption within a
		// queue frees what the preemptor takes.
		if blocked = admit(gate, t); blocked != nil {
			return victims, blocked, true
		}
		victims = append(victims, c.Victims...)
		if err := stmt.Pipeline(t, c.Node); err != nil {
			return victims, internalError(ssn, err, t), false
		}
	}
	return victims, nil, false
}

// placeSubGroup places all the pending tasks of a sub-group into stmt,
// making room where needed, within one of its network domains (anywhere
// in the current scope after those, when its constraint is soft), or
// none of them.
func (s *Search) placeSubGroup(job *api.JobInfo, g *api.SubGroup, stmt *framework.Statement, gate Gate, reason func(preemptor *api.TaskInfo) string) (victims []*api.TaskInfo, blocked *framework.Reason, gated bool) {
	ssn := s.ssn
	var pending []*api.TaskInfo
	for _, t := range g.Tasks {
		if t.Status == api.Pending && !t.BestEffort {
			pending = append(pending, t)
		}
	}
	if len(pending) == 0 {
		return nil, nil, false
	}
	ssn.SortTasks(pending)
	try := func() ([]*api.TaskInfo, *framework.Reason, bool) {
		inner := ssn.NewStatement()
		v, why, gated := s.placeTasks(job, pending, inner, true, gate, reason)
		if why != nil {
			inner.Discard()
			return nil, why, gated
		}
		stmt.Merge(inner)
		return v, nil, false
	}
	d := ssn.SubGroupDomains(job, g, true)
	if d == nil {
		return try()
	}
	if ssn.TryInDomains(d, func() bool {
		victims, blocked, gated = try()
		return blocked == nil || gated
	}) || !d.Hard {
		return victims, blocked, gated
	}
	why := d.Why
	if why == nil {
		why = framework.Reasonf("TopologyConstraint", "evicting pods in any one of the %d network domains sub-group %s may use would not make room for it", len(d.List), g.Name)
	}
	return nil, why.Of(framework.KindTopology), false
}

func admit(gate Gate, t *api.TaskInfo) *framework.Reason {
	if gate == nil {
		return nil
	}
	if ok, r := gate(t); !ok {
		return r
	}
	return nil
}

// key identifies alike jobs, which fare alike in the same session: of the
// same queue and priority, needing as many more tasks, with as many
// pending tasks that the plugins cannot tell apart. Jobs with a memory of
// evictions are never alike.
func (s *Search) key(job *api.JobInfo, tasks []*api.TaskInfo) (string, bool) {
	if len(tasks) == 0 || len(job.EvictedBy) > 0 {
		return "", false
	}
	sig, ok := s.ssn.TaskSignature(tasks[0])
	if !ok {
		return "", false
	}
	for _, t := range tasks[1:] {
		if other, ok := s.ssn.TaskSignature(t); !ok || other != sig {
			return "", false
		}
	}
	need := job.MinAvailable - job.PlacedCount()
	return fmt.Sprintf("%s\x00%d\x00%d\x00%d\x00%s\x00%s", job.Queue, job.Priority, need, len(tasks), sig, s.ssn.ScopeName()), true
}

func internalError(ssn *framework.Session, err error, t *api.TaskInfo) *framework.Reason {
	ssn.Logger.Error(err, "Evicting or placing failed", "task", t.Namespace+"/"+t.Name)
	return framework.Reasonf("InternalError", "%v", err)
}

// pending explains a job that room is being made for.
func pending(victims []*api.TaskInfo) *framework.Reason {
	names := make([]string, 0, len(victims))
	for _, v := range victims {
		names = append(names, v.Namespace+"/"+v.Name)
	}
	slices.Sort(names)
	list := strings.Join(names, ", ")
	if len(names) > 5 {
		list = fmt.Sprintf("%s and %d more", strings.Join(names[:5], ", "), len(names)-5)
	}
	return framework.Reasonf("PreemptionPending", "evicting %d pods to make room for the job: %s", len(victims), list).Of(framework.KindPreemption)
}
