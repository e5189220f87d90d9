// Package sharding keeps a caldera-scheduler instance to its NodeShard
// (shard.volcano.sh/v1alpha1): it reads the NodeShards from the informer
// cache, fences off the nodes the instance may not place on (core.Decide),
// and writes the instance's status. The scheduler calls Sync between
// cycles, so that no cycle places on a node the instance has given up.
package sharding

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	shardv1alpha1 "github.com/caldera-sh/caldera/apis/shard/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/sharding/core"
)

// Fence is the part of the scheduler's cache the coordinator drives.
type Fence interface {
	// SetPlaceable fences off the nodes placeable refuses: kept from new
	// placements, or with soft only tried when no other node fits.
	SetPlaceable(placeable func(node string) bool, soft bool)
}

// Witness tells whether the scheduler's cache holds every pod bound to a
// node by the time the NodeShards were at resourceVersion since: a node
// taken over from another instance is placed on only once it does, so that
// the pods the other instance bound there before releasing it are counted.
type Witness interface {
	CacheHolds(ctx context.Context, node, since string) (bool, error)
}

// Options configure a coordinator.
type Options struct {
	// Name is the instance's NodeShard.
	Name string
	// Soft prefers the shard's nodes instead of keeping to them.
	Soft bool
	// Client reads NodeShards (from the informer cache) and writes the
	// status.
	Client client.Client
	Fence  Fence
	// Busy reports whether binds to a node are in flight.
	Busy func(node string) bool
	// Witness checks the nodes the instance takes; nil takes them at
	// once.
	Witness Witness
	Clock   clock.PassiveClock
}

// checksPerSync bounds the nodes checked by the witness in one Sync, and
// witnessWorkers how many checks run at once; the rest wait for the next
// Sync.
const (
	checksPerSync  = 256
	witnessWorkers = 16
)

// Coordinator is one instance's view of the NodeShards.
type Coordinator struct {
	opts Options
	// dirty is set when a NodeShard changed since the last Sync.
	dirty atomic.Bool

	mu sync.Mutex
	// lastWrite is the resourceVersion of the instance's last status
	// write; the decision is settled once the cache shows it. lastWriteAt
	// is when it was written (by the instance's clock).
	lastWrite   string
	lastWriteAt time.Time
	// decidedAt is when the instance last decided.
	decidedAt time.Time
	last      core.Decision
	applied   bool
	// started: the instance has made its first whole decision (its status
	// written and seen, every node it may place on checked); ready: it
	// may place now.
	started, ready bool
	// witnessed are the nodes the witness confirmed since they last
	// became placeable; unwitnessed those it has yet to confirm.
	witnessed   map[string]bool
	unwitnessed []string
	// renewals say which other instances are gone: their status not seen
	// renewed for core.StaleAfter.
	renewals core.Renewals
}

// New returns a coordinator; call Changed from the NodeShard informer's
// handlers.
func New(o Options) *Coordinator {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	c := &Coordinator{opts: o, witnessed: map[string]bool{}}
	c.dirty.Store(true)
	return c
}

// Changed records that a NodeShard changed.
func (c *Coordinator) Changed() { c.dirty.Store(true) }

// Sync decides again when a NodeShard changed, while a node waits for its
// binds or for the witness, and at least every second (statuses age);
// then it applies the decision, and writes the status when it says
// something new or is due to be renewed. It reports whether the instance
// may place pods: not after a start until its first whole decision, nor
// while it cannot renew its status; the scheduler runs no cycle then, so
// that pending jobs are not told no node fits.
func (c *Coordinator) Sync(ctx context.Context) (ready bool, _ error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.Clock.Now()
	if !c.dirty.Swap(false) && c.applied && len(c.last.ToRemove) == 0 && len(c.unwitnessed) == 0 && now.Sub(c.decidedAt) < time.Second {
		return c.ready, nil
	}
	err := c.decide(ctx, now)
	return c.ready, err
}

func (c *Coordinator) decide(ctx context.Context, now time.Time) error {
	c.decidedAt = now
	var list shardv1alpha1.NodeShardList
	if err := c.opts.Client.List(ctx, &list); err != nil {
		c.dirty.Store(true)
		return fmt.Errorf("listing NodeShards: %w", err)
	}
	in := core.Input{Busy: c.opts.Busy, Placed: c.last.Place}
	var own *shardv1alpha1.NodeShard
	names := map[string]bool{}
	for i := range list.Items {
		s := &list.Items[i]
		sh := core.Shard{Name: s.Name, Desired: s.Spec.NodesDesired, InUse: s.Status.NodesInUse}
		if s.Name == c.opts.Name {
			own, in.Own = s, &sh
			continue
		}
		names[s.Name] = true
		sh.Stale = c.renewals.Observe(s.Name, s.Status.Stamp(), now)
		in.Others = append(in.Others, sh)
	}
	c.renewals.Keep(func(name string) bool { return names[name] })
	// The instance places only once this run of it has written its
	// status and seen the write, and while it keeps renewing it.
	in.Settled = own == nil || c.lastWrite != "" && atLeast(own.ResourceVersion, c.lastWrite)
	in.Lapsed = own != nil && (c.lastWriteAt.IsZero() || now.Sub(c.lastWriteAt) > core.RenewDeadline)
	d := core.Decide(in)
	if !d.All {
		d.Place = c.witness(ctx, d.Place, newest(list.Items, c.opts.Name))
	}
	if !c.applied || !samePlacement(d, c.last) {
		c.opts.Fence.SetPlaceable(d.Placeable, c.opts.Soft)
		c.applied = true
		klog.FromContext(ctx).V(2).Info("Shard nodes changed", "shard", c.opts.Name, "all", d.All, "place", len(d.Place), "toAdd", len(d.ToAdd), "toRemove", len(d.ToRemove), "lapsed", in.Lapsed)
	}
	c.last = d
	if !c.started && (own == nil || in.Settled && !in.Lapsed && len(c.unwitnessed) == 0) {
		c.started = true
	}
	c.ready = c.started && !in.Lapsed
	if own == nil || (own.Status.ObservedGeneration == own.Generation &&
		d.StatusEqual(own.Status.NodesInUse, own.Status.NodesToAdd, own.Status.NodesToRemove) &&
		!c.lastWriteAt.IsZero() && now.Sub(c.lastWriteAt) < core.HeartbeatPeriod) {
		return nil
	}
	upd := own.DeepCopy()
	stamp := metav1.NewTime(now)
	upd.Status = shardv1alpha1.NodeShardStatus{
		LastUpdateTime:     &stamp,
		NodesInUse:         d.InUse,
		NodesToAdd:         d.ToAdd,
		NodesToRemove:      d.ToRemove,
		Desired:            int32(len(own.Spec.NodesDesired)),
		InUse:              int32(len(d.InUse)),
		ToAdd:              int32(len(d.ToAdd)),
		ToRemove:           int32(len(d.ToRemove)),
		ObservedGeneration: own.Generation,
	}
	if err := c.opts.Client.Status().Update(ctx, upd); err != nil {
		// A conflict means the cache is behind: its next event syncs
		// again. Anything else is retried at the next Sync.
		c.dirty.Store(true)
		return fmt.Errorf("writing the status of NodeShard %s: %w", c.opts.Name, err)
	}
	c.lastWrite, c.lastWriteAt = upd.ResourceVersion, now
	return nil
}

// witness keeps from place the nodes the witness has not confirmed since
// they became placeable, asking it about at most checksPerSync of them,
// witnessWorkers at a time. It forgets the nodes that left place, so a
// node taken again is checked again.
func (c *Coordinator) witness(ctx context.Context, place []string, since string) []string {
	if c.opts.Witness == nil {
		return place
	}
	for n := range c.witnessed {
		if _, ok := slices.BinarySearch(place, n); !ok {
			delete(c.witnessed, n)
		}
	}
	var ask []string
	for _, n := range place {
		if !c.witnessed[n] && len(ask) < checksPerSync {
			ask = append(ask, n)
		}
	}
	if len(ask) > 0 {
		answers := make([]bool, len(ask))
		var wg sync.WaitGroup
		next := atomic.Int64{}
		for range min(witnessWorkers, len(ask)) {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < len(ask); i = int(next.Add(1) - 1) {
					ok, err := c.opts.Witness.CacheHolds(ctx, ask[i], since)
					if err != nil {
						klog.FromContext(ctx).V(2).Info("Checking a node taken into the shard; retried", "node", ask[i], "err", err)
					}
					answers[i] = ok && err == nil
				}
			})
		}
		wg.Wait()
		for i, n := range ask {
			c.witnessed[n] = answers[i]
		}
	}
	out := make([]string, 0, len(place))
	c.unwitnessed = c.unwitnessed[:0]
	for _, n := range place {
		if c.witnessed[n] {
			out = append(out, n)
		} else {
			c.unwitnessed = append(c.unwitnessed, n)
		}
	}
	return out
}

// newest is the latest resourceVersion of the NodeShards other than own.
func newest(shards []shardv1alpha1.NodeShard, own string) string {
	out := "0"
	for _, s := range shards {
		if s.Name != own && !atLeast(out, s.ResourceVersion) {
			out = s.ResourceVersion
		}
	}
	return out
}

// atLeast reports whether resourceVersion a is b or later; an unreadable
// one is taken as not later.
func atLeast(a, b string) bool {
	n, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && n >= 0
}

func samePlacement(a, b core.Decision) bool {
	return a.All == b.All && slices.Equal(a.Excluded, b.Excluded) && slices.Equal(a.Place, b.Place)
}
