package podfit

import (
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/structured"
)

// Claims in flight. A claim is in flight from the Reserve that allocated it
// until the PreBind that wrote the allocation (or the Unreserve that gave it
// up). kube-scheduler's claim tracker keeps them in a map and, for every
// pod's PreFilter, walks every claim in flight and every device result of
// each to add them to the allocated devices. In a cycle that places a
// thousand pods with claims, that walk is quadratic and costs most of the
// cycle. The claims view keeps them itself instead (the plugin reaches the
// tracker only through the view), with their devices counted into sets as
// they come and go.
//
// PreFilter gathers the allocated state for every pod. The view hands out
// one state, the tracker's at an epoch of claim events with the devices in
// flight added, until it goes stale: a claim event moves the epoch, or a
// claim leaves flight. A claim going into flight adds its devices to that
// state in place. The allocators of earlier pods of the cycle, which hold
// the state, then see those devices taken as well, which is only more
// accurate. This is safe because every reader and every writer of the state
// is the scheduling cycle: PreFilter and Reserve run on its goroutine, and
// the parallel Filter calls that read it end before the Reserve that
// writes it. Binding, on its own goroutines, only takes claims out of
// flight, which drops the state instead of changing it.

// inFlightClaim is a claim allocated at Reserve and not yet written, with
// how many pods hold it and the devices it takes.
type inFlightClaim struct {
	claim   *resourcev1.ResourceClaim
	sharers int
	// dedicated and shared are the claim's devices the way the allocated
	// state counts them (claimsView.eachDevice).
	dedicated []structured.DeviceID
	shared    []structured.SharedDeviceID
	capacity  []structured.DeviceConsumedCapacity
}

// inFlight is the claims in flight and the devices they take, counted so
// that a device leaves the sets only when no claim in flight takes it.
type inFlight struct {
	mu          sync.RWMutex
	claims      map[types.UID]*inFlightClaim
	devices     sets.Set[structured.DeviceID]
	shares      sets.Set[structured.SharedDeviceID]
	capacity    structured.ConsumedCapacityCollection
	deviceCount map[structured.DeviceID]int
	shareCount  map[structured.SharedDeviceID]int

	// generation moves whenever a claim enters or leaves flight.
	generation atomic.Uint64

	// handed is the allocated state last handed out, made at handedEpoch;
	// nil once a claim left flight.
	handed      *structured.AllocatedState
	handedEpoch uint64
}

func newInFlight() *inFlight {
	return &inFlight{
		claims:      map[types.UID]*inFlightClaim{},
		devices:     sets.New[structured.DeviceID](),
		shares:      sets.New[structured.SharedDeviceID](),
		capacity:    structured.NewConsumedCapacityCollection(),
		deviceCount: map[structured.DeviceID]int{},
		shareCount:  map[structured.SharedDeviceID]int{},
	}
}

// GetPendingAllocation is the allocation of the claim in flight, nil when
// it is not in flight.
func (c *claimsView) GetPendingAllocation(uid types.UID) *resourcev1.AllocationResult {
	c.flight.mu.RLock()
	defer c.flight.mu.RUnlock()
	if f, ok := c.flight.claims[uid]; ok {
		return f.claim.Status.Allocation
	}
	return nil
}

// SignalClaimPendingAllocation puts the allocated claim in flight, or adds
// a sharer when it is in flight already. A claim the assume cache already
// shows allocated does not go in flight: the Reserve that allocated it
// worked from a stale state.
func (c *claimsView) SignalClaimPendingAllocation(uid types.UID, allocated *resourcev1.ResourceClaim) error {
	f := c.flight
	f.mu.Lock()
	defer f.mu.Unlock()
	if in, ok := f.claims[uid]; ok {
		in.sharers++
		return nil
	}
	f.generation.Add(1)
	// A claim made up in memory for extended resources is in no cache.
	if allocated.Name != extendedResourceClaimName {
		assumed, err := c.Get(allocated.Namespace, allocated.Name)
		if err != nil {
			return fmt.Errorf("look up assumed claim %s/%s, UID=%s: %w", allocated.Namespace, allocated.Name, uid, err)
		}
		if assumed.UID == uid && assumed.Status.Allocation != nil {
			return nil
		}
	}
	in := &inFlightClaim{claim: allocated, sharers: 1}
	c.eachDevice(allocated,
		func(id structured.DeviceID) { in.dedicated = append(in.dedicated, id) },
		func(id structured.SharedDeviceID, r *resourcev1.DeviceRequestAllocationResult) {
			in.shared = append(in.shared, id)
			if r.ConsumedCapacity != nil {
				in.capacity = append(in.capacity, structured.NewDeviceConsumedCapacity(id.GetDeviceID(), r.ConsumedCapacity))
			}
		})
	f.claims[uid] = in
	for _, id := range in.dedicated {
		if count(f.deviceCount, id, 1) == 1 {
			f.devices.Insert(id)
		}
	}
	for _, id := range in.shared {
		if count(f.shareCount, id, 1) == 1 {
			f.shares.Insert(id)
		}
	}
	for _, cap := range in.capacity {
		f.capacity.Insert(cap)
	}
	if h := f.handed; h != nil {
		h.AllocatedDevices.Insert(in.dedicated...)
		h.AllocatedSharedDeviceIDs.Insert(in.shared...)
		for _, cap := range in.capacity {
			h.AggregatedCapacity.Insert(cap)
		}
	}
	return nil
}

// MaybeRemoveClaimPendingAllocation takes a sharer off the claim in
// flight, and the claim out of flight when it was the last one or when
// forced.
func (c *claimsView) MaybeRemoveClaimPendingAllocation(uid types.UID, force bool) bool {
	f := c.flight
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.claims[uid]
	if !ok {
		return false
	}
	if !force && in.sharers > 1 {
		in.sharers--
		return false
	}
	delete(f.claims, uid)
	f.generation.Add(1)
	for _, id := range in.dedicated {
		if count(f.deviceCount, id, -1) == 0 {
			f.devices.Delete(id)
		}
	}
	for _, id := range in.shared {
		if count(f.shareCount, id, -1) == 0 {
			f.shares.Delete(id)
		}
	}
	for _, cap := range in.capacity {
		f.capacity.Remove(cap)
	}
	f.handed = nil
	return true
}

// allocated returns the allocated state: the tracker's, gathered by
// tracked (which sees no claim in flight), with the devices in flight
// added. It is the state last handed out while that is current at the
// epoch; the caller may only read it.
func (f *inFlight) allocated(epoch uint64, tracked func() (*structured.AllocatedState, error)) (*structured.AllocatedState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.handed != nil && f.handedEpoch == epoch {
		return f.handed, nil
	}
	// No claim enters or leaves flight while the lock is held, and one
	// leaves only after the assume cache shows it allocated, so each claim
	// is counted by the tracker or here.
	out, err := tracked()
	if err != nil || out == nil {
		return out, err
	}
	out.AllocatedDevices = merge(out.AllocatedDevices, maps.Clone(f.devices))
	out.AllocatedSharedDeviceIDs = merge(out.AllocatedSharedDeviceIDs, maps.Clone(f.shares))
	if out.AggregatedCapacity == nil {
		out.AggregatedCapacity = structured.NewConsumedCapacityCollection()
	}
	for id, cap := range f.capacity {
		out.AggregatedCapacity.Insert(structured.DeviceConsumedCapacity{DeviceID: id, ConsumedCapacity: cap})
	}
	f.handed, f.handedEpoch = out, epoch
	return out, nil
}

// count moves a device's count of claims in flight by d and returns it.
func count[T comparable](counts map[T]int, id T, d int) int {
	n := counts[id] + d
	if n == 0 {
		delete(counts, id)
	} else {
		counts[id] = n
	}
	return n
}

// listed returns every device the claims in flight hold, the way the list
// of allocated devices counts them: a share as its device.
func (f *inFlight) listed() sets.Set[structured.DeviceID] {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := maps.Clone(f.devices)
	for id := range f.shares {
		out.Insert(id.GetDeviceID())
	}
	return out
}

// merge returns a ∪ b, adding the smaller to the larger; the caller owns
// both, and the one returned.
func merge[T comparable](a, b sets.Set[T]) sets.Set[T] {
	if len(b) > len(a) {
		a, b = b, a
	}
	if a == nil {
		a = sets.New[T]()
	}
	for id := range b {
		a.Insert(id)
	}
	return a
}

// extendedResourceClaimName is the name kube-scheduler gives the claim it
// makes up in memory for a pod's DRA-backed extended resources.
const extendedResourceClaimName = "<extended-resources>"
