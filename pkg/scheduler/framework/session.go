package framework

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// BindSink receives the placements a cycle commits, as they are committed,
// so binding overlaps with the rest of the cycle. The scheduler's binder
// implements it; the simulator and tests record.
type BindSink interface {
	Bind(task *api.TaskInfo, node string)
}

// A GroupBindSink takes a statement's placements together and may refuse
// them together: the scheduler's binder checks them against its cache,
// where another decision loop (the fast lane, or the scheduling cycle) may
// have taken the room since the snapshot. A refused statement is undone.
type GroupBindSink interface {
	BindSink
	BindGroup(placements []api.Placement) error
}

// EvictSink receives the evictions a cycle commits (the scheduler's
// evictor sends them through the Eviction API).
type EvictSink interface {
	Evict(task *api.TaskInfo, reason string)
}

// NominateSink follows nominations: a pending task pipelined onto room
// being freed for it (by evictions) claims that room until it is bound;
// the scheduler records the claim and shows it on the pod.
type NominateSink interface {
	Nominate(task *api.TaskInfo, node string)
	Unnominate(task *api.TaskInfo)
}

// Options configure a session.
type Options struct {
	// Now is the cycle's time; plugins never read the clock themselves.
	Now  time.Time
	Sink BindSink
	// Evictor receives committed evictions; without one, Statement.Evict
	// refuses.
	Evictor EvictSink
	// Nominator receives the claims of committed pipelined placements.
	Nominator NominateSink
	// NodesToFind, given the number of nodes, says how many feasible nodes
	// are enough to stop filtering for a task; nil means all.
	NodesToFind func(nodes int) int
	// StartNode is where the first search of the cycle starts (the
	// scheduler carries it from cycle to cycle so searches rotate).
	StartNode int
	// OutOfTime, asked between jobs, says the cycle has placed for long
	// enough: the jobs not yet tried wait for the next cycle (Session.Cut).
	// Nil means a cycle tries every job.
	OutOfTime func() bool
}

// QueueReport is what a queue-sharing plugin concluded about a queue in a
// cycle, for metrics and explanations.
type QueueReport struct {
	Deserved   *api.Resource
	Allocated  *api.Resource
	Capability *api.Resource
	Share      float64
}

// JobOutcome is what a cycle concluded about a job: what the shell writes
// back to its PodGroup.
type JobOutcome struct {
	// Enqueued: the job was admitted to Inqueue in this cycle.
	Enqueued bool
	// Blockers say what keeps the job from being (fully) placed, in kind
	// order (see BlockerKind), one per type; empty when nothing does.
	Blockers []*Reason
}

// Unschedulable sums the blockers up as one reason: the first blocker's
// type, and every blocker's message in order; nil without blockers.
func (o *JobOutcome) Unschedulable() *Reason {
	if o == nil || len(o.Blockers) == 0 {
		return nil
	}
	if len(o.Blockers) == 1 {
		return o.Blockers[0]
	}
	parts := make([]string, len(o.Blockers))
	for i, b := range o.Blockers {
		parts[i] = b.Type + ": " + b.Message
	}
	return &Reason{Type: o.Blockers[0].Type, Kind: o.Blockers[0].Kind, Message: strings.Join(parts, "; ")}
}

// Session is one scheduling cycle over a snapshot.
type Session struct {
	Ctx      context.Context
	Logger   klog.Logger
	Snapshot *api.Snapshot
	Now      time.Time

	sink        BindSink
	evictor     EvictSink
	nominator   NominateSink
	nodesToFind func(int) int
	nextStart   int
	outOfTime   func() bool
	// cut: OutOfTime said so; jobs were left untried.
	cut   bool
	tiers []Tier

	sessionPlugins []SessionPlugin
	eventHandlers  []EventHandlerPlugin
	reservers      []ReservePlugin
	queueOrder     [][]QueueOrderPlugin
	jobOrder       [][]JobOrderPlugin
	namespaceOrder [][]NamespaceOrderPlugin
	taskOrder      [][]TaskOrderPlugin
	jobValid       [][]JobValidPlugin
	jobReady       [][]JobReadyPlugin
	jobPipelined   [][]JobPipelinedPlugin
	jobStarving    [][]JobStarvingPlugin
	jobEnqueueable [][]JobEnqueueablePlugin
	jobEnqueued    []JobEnqueuedPlugin
	allocatable    [][]AllocatablePlugin
	overused       [][]OverusedPlugin
	prePredicate   [][]PrePredicatePlugin
	predicate      [][]PredicatePlugin
	nodeScore      [][]NodeScorePlugin
	preemptable    [][]PreemptablePlugin
	reclaimable    [][]ReclaimablePlugin
	preemptive     [][]PreemptivePlugin
	victimDistance []VictimDistancePlugin
	topology       [][]TopologyPlugin
	// scope restricts node searches to a domain; nil means every node.
	scope *Domain
	// subGroups caches each job's sub-groups (SubGroups).
	subGroups map[api.JobID]subGroups

	// signers and keepers are the predicate and node-score plugins when
	// every one of them can sign tasks (and every scorer keep scores);
	// memos holds, per task signature, the last alike task's candidates.
	signers []SignerPlugin
	keepers []ScoreKeeperPlugin
	memos   map[string]*placementMemo
	reused  int
	// noFit holds, per signature, the last failure to fit any node;
	// mutations counts the placements made and undone in the session.
	noFit     map[string]noFit
	mutations uint64
	// version names the session's state: every change moves it on, and a
	// discarded statement puts it back to where the statement began.
	version uint64

	state map[any]any
	// fitsBuf and futureBuf are Candidates' reused results.
	fitsBuf, futureBuf []*api.NodeInfo
	// shortBuf is scan's list of nodes without room, whose reasons are
	// counted only when no node fits.
	shortBuf []*api.NodeInfo
	// secondaryBuf is scan's list of nodes outside a soft shard.
	secondaryBuf []*api.NodeInfo
	// resourceStatus shares the statuses of nodes short of resources.
	resourceStatus map[string]*Status
	// shortNames and shortKey are insufficient's scratch space.
	shortNames   []corev1.ResourceName
	shortKey     []byte
	outcomes     map[api.JobID]*JobOutcome
	queueReports map[api.QueueID]QueueReport
	pluginTimes  map[string]time.Duration
	touchedNodes map[string]bool
	touchedJobs  map[api.JobID]bool
	bound        int
	// conflicts counts the statements the sink refused (Commit).
	conflicts int
	evictions []Eviction
}

// ReEvictionWindow is how long a job whose tasks were evicted for another
// job may not evict that job's tasks in turn (the scheduler remembers each
// eviction this long): two jobs never take the same room from each other
// back and forth.
const ReEvictionWindow = 5 * time.Minute

// Eviction is a committed eviction: the task, and the job it was evicted
// for.
type Eviction struct {
	Task *api.TaskInfo
	By   api.JobID
}

// OpenSession starts a cycle: it resolves each plugin's extension points and
// lets session plugins compute their per-cycle state.
func OpenSession(ctx context.Context, snap *api.Snapshot, tiers []Tier, o Options) *Session {
	ssn := &Session{
		Ctx:            ctx,
		Logger:         klog.FromContext(ctx),
		Snapshot:       snap,
		Now:            o.Now,
		sink:           o.Sink,
		evictor:        o.Evictor,
		nominator:      o.Nominator,
		nodesToFind:    o.NodesToFind,
		nextStart:      o.StartNode,
		outOfTime:      o.OutOfTime,
		tiers:          tiers,
		state:          map[any]any{},
		resourceStatus: map[string]*Status{},
		outcomes:       map[api.JobID]*JobOutcome{},
		queueReports:   map[api.QueueID]QueueReport{},
		pluginTimes:    map[string]time.Duration{},
		touchedNodes:   map[string]bool{},
		touchedJobs:    map[api.JobID]bool{},
	}
	ssn.sessionPlugins = all[SessionPlugin](tiers)
	ssn.eventHandlers = all[EventHandlerPlugin](tiers)
	ssn.reservers = all[ReservePlugin](tiers)
	ssn.jobEnqueued = all[JobEnqueuedPlugin](tiers)
	ssn.queueOrder = enabled[QueueOrderPlugin](tiers, PointQueueOrder)
	ssn.jobOrder = enabled[JobOrderPlugin](tiers, PointJobOrder)
	ssn.namespaceOrder = enabled[NamespaceOrderPlugin](tiers, PointNamespaceOrder)
	ssn.taskOrder = enabled[TaskOrderPlugin](tiers, PointTaskOrder)
	ssn.jobValid = enabled[JobValidPlugin](tiers, PointJobValid)
	ssn.jobReady = enabled[JobReadyPlugin](tiers, PointJobReady)
	ssn.jobPipelined = enabled[JobPipelinedPlugin](tiers, PointJobPipelined)
	ssn.jobStarving = enabled[JobStarvingPlugin](tiers, PointJobStarving)
	ssn.jobEnqueueable = enabled[JobEnqueueablePlugin](tiers, PointJobEnqueueable)
	ssn.allocatable = enabled[AllocatablePlugin](tiers, PointAllocatable)
	ssn.overused = enabled[OverusedPlugin](tiers, PointOverused)
	ssn.prePredicate = enabled[PrePredicatePlugin](tiers, PointPredicate)
	ssn.predicate = enabled[PredicatePlugin](tiers, PointPredicate)
	ssn.nodeScore = enabled[NodeScorePlugin](tiers, PointNodeOrder)
	ssn.preemptable = enabled[PreemptablePlugin](tiers, PointPreemptable)
	ssn.reclaimable = enabled[ReclaimablePlugin](tiers, PointReclaimable)
	ssn.preemptive = enabled[PreemptivePlugin](tiers, PointPreemptive)
	ssn.victimDistance = all[VictimDistancePlugin](tiers)
	ssn.topology = enabled[TopologyPlugin](tiers, PointHyperNodeGradient)
	ssn.setUpMemos()
	// Fixed as the cycle begins, before any decision changes the jobs.
	snap.WorkList()
	snap.Totals()
	if !severalToPlace(snap) {
		// No task could reuse another's search: signing tasks and
		// keeping their candidates would be work for nothing.
		ssn.memos, ssn.noFit, ssn.signers, ssn.keepers = nil, nil, nil, nil
	}
	for _, p := range ssn.sessionPlugins {
		start := time.Now()
		p.OnSessionOpen(ssn)
		ssn.pluginTimes[p.Name()] += time.Since(start)
	}
	return ssn
}

// severalToPlace reports whether more than one task waits to be placed.
func severalToPlace(snap *api.Snapshot) bool {
	n := 0
	for _, j := range snap.WorkList() {
		if n += int(j.CountIn(api.Pending, api.Pipelined)); n > 1 {
			return true
		}
	}
	return false
}

// Close ends the cycle.
func (ssn *Session) Close() {
	for _, p := range ssn.sessionPlugins {
		start := time.Now()
		p.OnSessionClose(ssn)
		ssn.pluginTimes[p.Name()] += time.Since(start)
	}
}

// ReportQueue records a queue-sharing plugin's view of a queue at close.
func (ssn *Session) ReportQueue(id api.QueueID, r QueueReport) { ssn.queueReports[id] = r }

// QueueReports returns what plugins reported about queues.
func (ssn *Session) QueueReports() map[api.QueueID]QueueReport { return ssn.queueReports }

// PluginTimes returns how long each plugin took to open and close the cycle.
func (ssn *Session) PluginTimes() map[string]time.Duration { return ssn.pluginTimes }

// Outcomes returns what the cycle concluded per job.
func (ssn *Session) Outcomes() map[api.JobID]*JobOutcome { return ssn.outcomes }

// Touched returns the nodes and jobs the cycle changed, which the cache must
// copy afresh for the next snapshot.
func (ssn *Session) Touched() (nodes map[string]bool, jobs map[api.JobID]bool) {
	return ssn.touchedNodes, ssn.touchedJobs
}

// NextStartNode is where the next cycle's first node search should start.
func (ssn *Session) NextStartNode() int { return ssn.nextStart }

// Evictions are the evictions committed in the cycle, in order.
func (ssn *Session) Evictions() []Eviction { return ssn.evictions }

// Conflicts is the number of statements whose placements the sink refused
// because the room was taken since the snapshot: their jobs are worth
// trying again at once.
func (ssn *Session) Conflicts() int { return ssn.conflicts }

// OutOfTime reports whether the cycle should stop trying jobs (see
// Options.OutOfTime). An action asks before each job it would try; once it
// says so, it keeps saying so, and Cut reports it.
func (ssn *Session) OutOfTime() bool {
	if !ssn.cut && ssn.outOfTime != nil && ssn.outOfTime() {
		ssn.cut = true
	}
	return ssn.cut
}

// Cut reports whether the cycle stopped with jobs left untried: they are
// worth a cycle at once.
func (ssn *Session) Cut() bool { return ssn.cut }

// BoundCount is the number of placements committed in the cycle.
func (ssn *Session) BoundCount() int { return ssn.bound }

// Outcome returns the job's outcome record, creating it.
func (ssn *Session) Outcome(job api.JobID) *JobOutcome {
	o := ssn.outcomes[job]
	if o == nil {
		o = &JobOutcome{}
		ssn.outcomes[job] = o
	}
	return o
}

// Block records what keeps a job from being placed. Blockers are kept in
// kind order; a second reason of a type the job already has is dropped
// (the earliest action's stands).
func (ssn *Session) Block(job api.JobID, r *Reason) {
	if r == nil {
		return
	}
	o := ssn.Outcome(job)
	at := len(o.Blockers)
	for i, b := range o.Blockers {
		if b.Type == r.Type {
			return
		}
		if at == len(o.Blockers) && r.Kind.rank() < b.Kind.rank() {
			at = i
		}
	}
	o.Blockers = slices.Insert(o.Blockers, at, r)
}

// QueueLess orders queues: tier by tier the first plugin with an opinion
// decides; otherwise by name.
func (ssn *Session) QueueLess(l, r *api.QueueInfo) bool {
	for _, tier := range ssn.queueOrder {
		for _, p := range tier {
			if c := p.QueueOrder(l, r); c != 0 {
				return c < 0
			}
		}
	}
	return l.Name < r.Name
}

// JobLess orders jobs: plugins first, then creation time, then ID.
func (ssn *Session) JobLess(l, r *api.JobInfo) bool {
	for _, tier := range ssn.jobOrder {
		for _, p := range tier {
			if c := p.JobOrder(l, r); c != 0 {
				return c < 0
			}
		}
	}
	if !l.CreationTimestamp.Equal(&r.CreationTimestamp) {
		return l.CreationTimestamp.Before(&r.CreationTimestamp)
	}
	return l.UID < r.UID
}

// NamespaceLess orders namespaces: plugins first, then by name.
func (ssn *Session) NamespaceLess(l, r string) bool {
	for _, tier := range ssn.namespaceOrder {
		for _, p := range tier {
			if c := p.NamespaceOrder(l, r); c != 0 {
				return c < 0
			}
		}
	}
	return l < r
}

// TaskLess orders tasks: plugins first, then by name (which keeps indexed
// pods of a Volcano Job in index order).
func (ssn *Session) TaskLess(l, r *api.TaskInfo) bool {
	for _, tier := range ssn.taskOrder {
		for _, p := range tier {
			if c := p.TaskOrder(l, r); c != 0 {
				return c < 0
			}
		}
	}
	if c := strings.Compare(l.Name, r.Name); c != 0 {
		return c < 0
	}
	return l.UID < r.UID
}

// JobValid returns the first plugin's objection, or nil.
func (ssn *Session) JobValid(job *api.JobInfo) *Reason {
	for _, tier := range ssn.jobValid {
		for _, p := range tier {
			if r := p.JobValid(job); r != nil {
				if r.Kind == KindPlacement {
					r = r.Of(KindJob)
				}
				return r
			}
		}
	}
	return nil
}

// JobReady needs every enabled plugin to agree.
func (ssn *Session) JobReady(job *api.JobInfo) bool {
	for _, tier := range ssn.jobReady {
		for _, p := range tier {
			if !p.JobReady(job) {
				return false
			}
		}
	}
	return true
}

// JobPipelined is decided by the first tier with a vote; a rejection wins.
// Without votes the job counts as pipelined.
func (ssn *Session) JobPipelined(job *api.JobInfo) bool {
	for _, tier := range ssn.jobPipelined {
		permitted := false
		for _, p := range tier {
			switch p.JobPipelined(job) {
			case Reject:
				return false
			case Permit:
				permitted = true
			}
		}
		if permitted {
			return true
		}
	}
	return true
}

// JobStarving: any enabled plugin saying starving makes the job starving;
// without plugins no job is.
func (ssn *Session) JobStarving(job *api.JobInfo) bool {
	for _, tier := range ssn.jobStarving {
		for _, p := range tier {
			if p.JobStarving(job) {
				return true
			}
		}
	}
	return false
}

// JobEnqueueable is decided like JobPipelined; the first rejection's reason
// is returned.
func (ssn *Session) JobEnqueueable(job *api.JobInfo) (bool, *Reason) {
	for _, tier := range ssn.jobEnqueueable {
		permitted := false
		for _, p := range tier {
			switch v, r := p.JobEnqueueable(job); v {
			case Reject:
				return false, queueReason(r)
			case Permit:
				permitted = true
			}
		}
		if permitted {
			return true, nil
		}
	}
	return true, nil
}

// queueReason marks a plugin's verdict on a queue as a queue blocker.
func queueReason(r *Reason) *Reason {
	if r == nil || r.Kind != KindPlacement {
		return r
	}
	return r.Of(KindQueue)
}

// JobEnqueued tells plugins that a job was admitted.
func (ssn *Session) JobEnqueued(job *api.JobInfo) {
	for _, p := range ssn.jobEnqueued {
		p.JobEnqueued(job)
	}
	ssn.Outcome(job.UID).Enqueued = true
	ssn.touchedJobs[job.UID] = true
}

// Allocatable needs every enabled plugin to let the queue take the task.
func (ssn *Session) Allocatable(q *api.QueueInfo, t *api.TaskInfo) (bool, *Reason) {
	for _, tier := range ssn.allocatable {
		for _, p := range tier {
			if ok, r := p.Allocatable(q, t); !ok {
				return false, queueReason(r)
			}
		}
	}
	return true, nil
}

// Overused: any enabled plugin saying so makes the queue overused.
func (ssn *Session) Overused(q *api.QueueInfo) bool {
	for _, tier := range ssn.overused {
		for _, p := range tier {
			if p.Overused(q) {
				return true
			}
		}
	}
	return false
}

// PrePredicate prepares node filtering for a task; the first rejection ends it.
func (ssn *Session) PrePredicate(t *api.TaskInfo) *Status {
	for _, tier := range ssn.prePredicate {
		for _, p := range tier {
			if s := p.PrePredicate(t); s != nil {
				return s
			}
		}
	}
	return nil
}

// fencedStatus rejects a node outside the scheduler's shard; evicting
// pods there cannot help.
var fencedStatus = &Status{Plugin: "NodeShard", Reasons: []string{"outside this scheduler's NodeShard"}, Code: UnschedulableAndUnresolvable}

// Predicate needs the node to be in the scheduler's shard and every
// enabled plugin to accept it.
func (ssn *Session) Predicate(t *api.TaskInfo, n *api.NodeInfo) *Status {
	if n.Fenced {
		return fencedStatus
	}
	for _, tier := range ssn.predicate {
		for _, p := range tier {
			if s := p.Predicate(t, n); s != nil {
				return s
			}
		}
	}
	return nil
}

// PredicateWithout is Predicate as if the victims (tasks on the node) were
// gone.
func (ssn *Session) PredicateWithout(t *api.TaskInfo, n *api.NodeInfo, victims []*api.TaskInfo) *Status {
	if n.Fenced {
		return fencedStatus
	}
	for _, tier := range ssn.predicate {
		for _, p := range tier {
			var s *Status
			if vp, ok := p.(VictimPredicatePlugin); ok {
				s = vp.PredicateWithout(t, n, victims)
			} else {
				s = p.Predicate(t, n)
			}
			if s != nil {
				return s
			}
		}
	}
	return nil
}

// ScoreNodes sums every enabled scorer's scores for the nodes.
func (ssn *Session) ScoreNodes(t *api.TaskInfo, nodes []*api.NodeInfo) []float64 {
	scores := make([]float64, len(nodes))
	for _, tier := range ssn.nodeScore {
		for _, p := range tier {
			p.ScoreNodes(t, nodes, scores)
		}
	}
	return scores
}

// HasScorers reports whether any plugin scores nodes.
func (ssn *Session) HasScorers() bool { return len(ssn.nodeScore) > 0 }

// Preemptable returns the candidates every enabled plugin lets the
// preemptor evict.
func (ssn *Session) Preemptable(preemptor *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	for _, tier := range ssn.preemptable {
		for _, p := range tier {
			candidates = p.Preemptable(preemptor, candidates)
		}
	}
	return candidates
}

// Reclaimable returns the candidates every enabled plugin lets the
// reclaimer take back.
func (ssn *Session) Reclaimable(reclaimer *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	for _, tier := range ssn.reclaimable {
		for _, p := range tier {
			candidates = p.Reclaimable(reclaimer, candidates)
		}
	}
	return candidates
}

// Preemptive reports whether the queue may reclaim resources from other
// queues to place the task: every enabled plugin must agree, and without
// any (no plugin shares the cluster among queues) no queue may.
func (ssn *Session) Preemptive(q *api.QueueInfo, t *api.TaskInfo) bool {
	if len(ssn.preemptive) == 0 {
		return false
	}
	for _, tier := range ssn.preemptive {
		for _, p := range tier {
			if !p.Preemptive(q, t) {
				return false
			}
		}
	}
	return true
}

// VictimDistance is the farthest any plugin ranks the victim from the
// reclaimer; 0 without plugins.
func (ssn *Session) VictimDistance(reclaimer, victim *api.TaskInfo) int {
	d := 0
	for _, p := range ssn.victimDistance {
		d = max(d, p.VictimDistance(reclaimer, victim))
	}
	return d
}

func (ssn *Session) fireAllocate(t *api.TaskInfo) {
	for _, p := range ssn.eventHandlers {
		p.OnAllocate(t)
	}
}

func (ssn *Session) fireDeallocate(t *api.TaskInfo) {
	for _, p := range ssn.eventHandlers {
		p.OnDeallocate(t)
	}
}

// SortTasks sorts tasks by TaskLess.
func (ssn *Session) SortTasks(tasks []*api.TaskInfo) {
	slices.SortFunc(tasks, cmpOf(ssn.TaskLess))
}

// SortJobs sorts jobs by JobLess.
func (ssn *Session) SortJobs(jobs []*api.JobInfo) {
	slices.SortFunc(jobs, cmpOf(ssn.JobLess))
}

func cmpOf[T any](less func(a, b T) bool) func(a, b T) int {
	return func(a, b T) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	}
}
