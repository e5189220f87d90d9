// Package fastlane places latency-sensitive single pods (agents, bursts of
// short serverless-style pods) beside the scheduling cycle, so that they
// never wait behind a cycle busy with queued gangs.
//
// The lane runs several workers. Each keeps a view of the scheduler's cache
// (a snapshot series of its own), owns the fast-lane jobs that hash to it,
// and places them with the scheduler's own allocate action (backfill for
// pods that request nothing) and plugins. Each worker has its own plugin
// instances and pod-fit evaluator, as a session's plugins keep
// per-session state. Workers and
// the scheduling cycle decide optimistically on their snapshots; the
// binder's group bind checks every placement against the cache, where a
// placement on a node that changed since the snapshot must still fit it as
// it is now (cache.AssumeGroup). The loser of a race for a node's last
// room is refused and tries again on a fresh snapshot, so neither path
// ever places two pods on a node's last free slot.
package fastlane

import (
	"context"
	"hash/fnv"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/backfill"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/cache"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Options configure a lane.
type Options struct {
	// Tiers are each worker's plugins: one set per worker, built from the
	// scheduler's configuration.
	Tiers [][]framework.Tier
	// Binder binds; it checks the placements against the cache.
	Binder framework.GroupBindSink
	// NodesToFind bounds the search for feasible nodes (nil: all nodes).
	NodesToFind func(nodes int) int
	// Retry is how often a worker with pods it could not place looks
	// again without a change to wake it. Default 1s.
	Retry time.Duration
	// Placing, when set, says whether pods may be placed now (a sharded
	// scheduler's NodeShard is not in force yet); rounds wait until it
	// does.
	Placing func() bool
	// Explain, when set, receives each round's outcomes: why the pods it
	// could not place wait (the scheduler's explanations).
	Explain  func(snap *api.Snapshot, outcomes map[api.JobID]*framework.JobOutcome, at time.Time)
	Observer Observer
	Clock    clock.WithTicker
}

// Observer is told what each placement round did, for metrics.
type Observer interface {
	ObserveFastLane(Round)
}

// Round is one worker's placement round.
type Round struct {
	Worker    int
	Duration  time.Duration
	Bound     int
	Conflicts int
}

// Lane is the fast lane.
type Lane struct {
	cache   *cache.Cache
	opts    Options
	workers []*worker
}

type worker struct {
	id    int
	lane  *Lane
	tiers []framework.Tier
	// actions are allocate, and backfill for pods that request nothing.
	actions []framework.Action
	trigger chan struct{}
	start   int
}

// New returns a lane with one worker per set of tiers.
func New(c *cache.Cache, o Options) *Lane {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Retry <= 0 {
		o.Retry = time.Second
	}
	l := &Lane{cache: c, opts: o}
	for i, tiers := range o.Tiers {
		l.workers = append(l.workers, &worker{id: i, lane: l, tiers: tiers, actions: []framework.Action{allocate.New(), backfill.New()}, trigger: make(chan struct{}, 1)})
	}
	return l
}

// Notify tells the workers something changed. It never blocks.
func (l *Lane) Notify() {
	for _, w := range l.workers {
		w.wake()
	}
}

func (w *worker) wake() {
	select {
	case w.trigger <- struct{}{}:
	default:
	}
}

// Run runs the workers until ctx ends.
func (l *Lane) Run(ctx context.Context) {
	done := make(chan struct{}, len(l.workers))
	for _, w := range l.workers {
		go func() {
			w.run(ctx)
			done <- struct{}{}
		}()
	}
	for range l.workers {
		<-done
	}
}

func (w *worker) run(ctx context.Context) {
	view := w.lane.cache.NewView()
	defer view.Close()
	retry := w.lane.opts.Clock.NewTicker(w.lane.opts.Retry)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.trigger:
		case <-retry.C():
		}
		if p := w.lane.opts.Placing; p != nil && !p() {
			continue
		}
		if !w.lane.cache.FastWork() {
			continue
		}
		if r := w.place(ctx, view); r.Conflicts > 0 {
			// Another decision took the room: look again at once, on the
			// state as it now is.
			w.wake()
		}
	}
}

// place places the worker's waiting jobs on view's next snapshot.
func (w *worker) place(ctx context.Context, view *cache.View) Round {
	clk := w.lane.opts.Clock
	start := clk.Now()
	snap := view.Snapshot()
	var mine []*api.JobInfo
	for _, j := range snap.WorkList() {
		if owner(j.UID, len(w.lane.workers)) == w.id {
			mine = append(mine, j)
		}
	}
	r := Round{Worker: w.id}
	if len(mine) == 0 {
		return r
	}
	snap.SetLists(snap.JobList(), mine)
	ssn := framework.OpenSession(ctx, snap, w.tiers, framework.Options{
		Now: start, Sink: w.lane.opts.Binder, NodesToFind: w.lane.opts.NodesToFind, StartNode: w.start,
	})
	for _, a := range w.actions {
		a.Execute(ssn)
	}
	ssn.Close()
	w.start = ssn.NextStartNode()
	view.Invalidate(ssn.Touched())
	r.Bound, r.Conflicts, r.Duration = ssn.BoundCount(), ssn.Conflicts(), clk.Since(start)
	if w.lane.opts.Explain != nil {
		w.lane.opts.Explain(snap, ssn.Outcomes(), start)
	}
	if w.lane.opts.Observer != nil {
		w.lane.opts.Observer.ObserveFastLane(r)
	}
	klog.FromContext(ctx).V(4).Info("Fast lane round done", "worker", w.id, "jobs", len(mine), "bound", r.Bound, "conflicts", r.Conflicts, "duration", r.Duration)
	return r
}

// owner is the worker a job belongs to.
func owner(id api.JobID, workers int) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(workers))
}
