// Package scheduler runs Caldera's scheduling cycles: it waits for a change
// while work is pending (or for the heartbeat), gathers further events for a
// short window, then runs the configured actions over a fresh snapshot and
// hands the outcome to the binder and the status writer.
package scheduler

import (
	"context"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/cache"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// StatusSink receives each cycle's outcome; the status writer implements it.
type StatusSink interface {
	Apply(snap *api.Snapshot, outcomes map[api.JobID]*framework.JobOutcome, touched map[api.JobID]bool, now metav1.Time)
}

// NominationWriter shows a task's nomination on its pod
// (status.nominatedNodeName); node "" clears it.
type NominationWriter interface {
	WriteNomination(task *api.TaskInfo, node string)
}

// ShardSyncer brings the nodes the scheduler may place on in line with its
// NodeShard (sharding.Coordinator). It runs between cycles, and says
// whether the scheduler may place pods at all.
type ShardSyncer interface {
	Sync(ctx context.Context) (ready bool, err error)
}

// CycleObserver is told about each cycle, for metrics.
type CycleObserver interface {
	ObserveCycle(CycleStats)
}

// CycleStats describe one cycle.
type CycleStats struct {
	Duration        time.Duration
	ActionDurations map[string]time.Duration
	// PluginDurations is each plugin's time opening and closing the cycle.
	PluginDurations map[string]time.Duration
	Bound           int
	// Unschedulable jobs, and their tasks still pending.
	Unschedulable      int
	UnschedulableTasks int
	// Pending counts the unschedulable jobs by queue and by the type of
	// their first blocker.
	Pending map[PendingKey]int
	// Queues are the queue-sharing plugin's figures.
	Queues map[api.QueueID]framework.QueueReport
}

// PendingKey groups unschedulable jobs.
type PendingKey struct {
	Queue  string
	Reason string
}

// Options configure a scheduler.
type Options struct {
	Actions []framework.Action
	Tiers   []framework.Tier
	// CoalesceWindow is how long to gather events before a cycle.
	CoalesceWindow time.Duration
	// Heartbeat is the longest time between cycles while work is pending.
	Heartbeat time.Duration
	// MaxCycle is how long a cycle goes on trying jobs; the rest are left
	// to the next cycle, which starts at once. 0 means no limit.
	MaxCycle time.Duration
	Binder   framework.BindSink
	// Evictor receives the evictions a cycle commits (preempt, reclaim).
	Evictor framework.EvictSink
	// Nominations shows nominations on pods; nil keeps them in the cache
	// only (they do not survive a restart then).
	Nominations NominationWriter
	Status      StatusSink
	// NodesToFind bounds the search for feasible nodes (nil: all nodes).
	NodesToFind func(nodes int) int
	// Shard keeps the scheduler to its NodeShard; nil uses every node.
	Shard    ShardSyncer
	Observer CycleObserver
	Clock    clock.WithTicker
}

// Scheduler runs cycles.
type Scheduler struct {
	cache   *cache.Cache
	opts    Options
	trigger chan struct{}
	// startNode rotates node searches across cycles.
	startNode int
	explained explanations
	// queuesSynced is when queue statuses were last compared.
	queuesSynced time.Time
	// placing: the node shard (if any) lets the scheduler place pods.
	placing atomic.Bool
}

// New returns a scheduler over c. Wire c's Notify to Scheduler.Notify.
func New(c *cache.Cache, o Options) *Scheduler {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	s := &Scheduler{cache: c, opts: o, trigger: make(chan struct{}, 1)}
	s.placing.Store(o.Shard == nil)
	return s
}

// Placing reports whether the scheduler may place pods now: always without
// a node shard; with one, once the shard's last sync said so. The fast
// lane asks before each round.
func (s *Scheduler) Placing() bool { return s.placing.Load() }

// Notify tells the scheduler something changed. It never blocks.
func (s *Scheduler) Notify() {
	select {
	case s.trigger <- struct{}{}:
	default:
	}
}

// Run runs cycles until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	heartbeat := s.opts.Clock.NewTicker(s.opts.Heartbeat)
	defer heartbeat.Stop()
	// Status written while idle is batched: a burst of pod events (binds
	// confirmed, pods starting) is written once per statusInterval rather
	// than recomputed per event.
	var lastSync time.Time
	var syncLater <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.trigger:
		case <-heartbeat.C():
		case <-syncLater:
			syncLater = nil
		}
		if s.opts.Shard != nil {
			ready, err := s.opts.Shard.Sync(ctx)
			if err != nil {
				klog.FromContext(ctx).Error(err, "Syncing the node shard; retried at the next wake-up")
			}
			s.placing.Store(ready)
			if !ready {
				continue
			}
		}
		if !s.cache.PendingWork() {
			if wait := statusInterval - s.opts.Clock.Since(lastSync); wait > 0 {
				if syncLater == nil {
					syncLater = s.opts.Clock.After(wait)
				}
				continue
			}
			s.syncStatus(ctx)
			lastSync = s.opts.Clock.Now()
			continue
		}
		if s.opts.CoalesceWindow > 0 {
			select {
			case <-ctx.Done():
				return
			case <-s.opts.Clock.After(s.opts.CoalesceWindow):
			}
		}
		// Changes up to now are part of this cycle.
		select {
		case <-s.trigger:
		default:
		}
		s.RunCycle(ctx)
	}
}

// statusInterval is the shortest time between two idle status syncs.
const statusInterval = 200 * time.Millisecond

// queueResync is how often an idle scheduler compares every queue's status
// with what the API server shows even when no Queue changed, so that a
// status another writer changed is put right (writeback.ResendAfter).
const queueResync = time.Minute

// syncStatus writes the status of jobs that changed while there was nothing
// to schedule (pods starting, finishing, being deleted), and of queues
// whenever a Queue changed (their status is compared again with what the
// API server now shows) or queueResync passed. Either way the cycle's
// snapshot is brought up to date (Cache.Refresh).
func (s *Scheduler) syncStatus(ctx context.Context) {
	dirty := s.cache.TakeStatusDirty()
	queues := s.cache.TakeQueuesDirty() || s.opts.Clock.Since(s.queuesSynced) >= queueResync
	if (len(dirty) == 0 && !queues) || s.opts.Status == nil {
		// Nothing to write; the cycle's snapshot still follows the cache,
		// so that it lets go of what the cache replaced.
		s.cache.Refresh()
		return
	}
	if queues {
		s.queuesSynced = s.opts.Clock.Now()
	}
	snap := s.cache.Snapshot()
	s.cache.KeepPhases(decidedPhases(snap, dirty))
	s.opts.Status.Apply(snap, nil, dirty, metav1.NewTime(s.opts.Clock.Now()))
}

// decidedPhases returns the phase each of the jobs' PodGroups should show
// where it is not the one the job has now (the PodGroup's, or one the
// cache keeps), for Cache.KeepPhases: the write of a phase may be held
// (writeback.PodGroupHold), and the next cycles decide from it.
func decidedPhases(snap *api.Snapshot, ids map[api.JobID]bool) map[api.JobID]schedulingv1beta1.PodGroupPhase {
	out := map[api.JobID]schedulingv1beta1.PodGroupPhase{}
	for id := range ids {
		j := snap.Jobs[id]
		if j == nil || j.PodGroup == nil || j.IsShadow() {
			continue
		}
		if p := framework.JobPhase(j); p != j.Phase {
			out[id] = p
		}
	}
	return out
}

// RunCycle runs one cycle now.
func (s *Scheduler) RunCycle(ctx context.Context) CycleStats {
	start := s.opts.Clock.Now()
	logger := klog.FromContext(ctx)
	// The jobs whose status may have changed are taken before the
	// snapshot: a job changing during the cycle (its pods starting) stays
	// marked for the next sync, which sees the change; taken after, its
	// mark would be spent on this cycle's older view of it.
	dirty := s.cache.TakeStatusDirty()
	snap := s.cache.Snapshot()
	o := framework.Options{
		Now: start, Sink: s.opts.Binder, NodesToFind: s.opts.NodesToFind, StartNode: s.startNode,
		Nominator: intents{s},
	}
	if s.opts.Evictor != nil {
		o.Evictor = intents{s}
	}
	if limit := s.opts.MaxCycle; limit > 0 {
		o.OutOfTime = func() bool { return s.opts.Clock.Since(start) >= limit }
	}
	ssn := framework.OpenSession(ctx, snap, s.opts.Tiers, o)
	stats := CycleStats{ActionDurations: make(map[string]time.Duration, len(s.opts.Actions))}
	for _, a := range s.opts.Actions {
		as := s.opts.Clock.Now()
		a.Execute(ssn)
		stats.ActionDurations[a.Name()] = s.opts.Clock.Since(as)
	}
	ssn.Close()
	if ssn.Conflicts() > 0 || ssn.Cut() {
		// Placements the fast lane's took the room of, and jobs the cycle
		// left untried, are tried again on the state as it now is.
		s.Notify()
	}
	for _, e := range ssn.Evictions() {
		s.cache.RecordEviction(e.Task.Job, e.By, start, framework.ReEvictionWindow)
	}
	s.startNode = ssn.NextStartNode()
	nodes, jobs := ssn.Touched()
	s.cache.Invalidate(nodes, jobs)
	for id := range dirty {
		jobs[id] = true
	}
	// Apply below compares every queue.
	s.cache.TakeQueuesDirty()
	s.queuesSynced = start
	phases := decidedPhases(snap, jobs)
	for id, o := range ssn.Outcomes() {
		if o.Enqueued {
			phases[id] = schedulingv1beta1.PodGroupInqueue
		}
		if why := o.Unschedulable(); why != nil {
			stats.Unschedulable++
			key := PendingKey{Reason: why.Type}
			if j := snap.Jobs[id]; j != nil {
				stats.UnschedulableTasks += int(j.PendingCount())
				key.Queue = string(j.Queue)
			}
			if stats.Pending == nil {
				stats.Pending = map[PendingKey]int{}
			}
			stats.Pending[key]++
		}
	}
	s.cache.KeepPhases(phases)
	s.explained.record(snap, ssn.Outcomes(), start)
	if s.opts.Status != nil {
		s.opts.Status.Apply(snap, ssn.Outcomes(), jobs, metav1.NewTime(start))
	}
	stats.Bound = ssn.BoundCount()
	stats.PluginDurations = ssn.PluginTimes()
	stats.Queues = ssn.QueueReports()
	stats.Duration = s.opts.Clock.Since(start)
	if s.opts.Observer != nil {
		s.opts.Observer.ObserveCycle(stats)
	}
	logger.V(4).Info("Cycle done", "duration", stats.Duration, "bound", stats.Bound, "unschedulable", stats.Unschedulable, "jobs", len(snap.Jobs), "nodes", len(snap.Nodes))
	return stats
}

// intents records in the cache what a cycle decided before the API server
// shows it, so that the next snapshot already counts it: evictions in
// flight (the victims release their room) and nominations (claims on that
// room).
type intents struct{ s *Scheduler }

func (i intents) Evict(t *api.TaskInfo, reason string) {
	i.s.cache.AssumeEvicted(t)
	i.s.opts.Evictor.Evict(t, reason)
}

func (i intents) Nominate(t *api.TaskInfo, node string) {
	if i.s.cache.Nominate(t, node) && i.s.opts.Nominations != nil {
		i.s.opts.Nominations.WriteNomination(t, node)
	}
}

func (i intents) Unnominate(t *api.TaskInfo) {
	if i.s.cache.Unnominate(t.UID) && i.s.opts.Nominations != nil {
		i.s.opts.Nominations.WriteNomination(t, "")
	}
}
