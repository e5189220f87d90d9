package podfit

import (
	"context"
	"encoding/json"
	"fmt"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/featuregate"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// newDRAManager builds what kube-scheduler's DynamicResources plugin reads
// claims, slices and classes through, the way kube-scheduler builds it: an
// assume cache over the claim informer (so a claim the plugin wrote is
// seen at once, before its watch event), a slice tracker that applies
// device taint rules, and the extended-resource cache fed by the
// DeviceClass informer (DeviceClasses that back an extended resource). It
// registers the informers on the factory; start the factory after New.
func newDRAManager(ctx context.Context, factory informers.SharedInformerFactory, cs clientset.Interface, gate featuregate.FeatureGate) (*draView, error) {
	logger := klog.FromContext(ctx)
	claims := assumecache.NewAssumeCache(logger, factory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	opts := resourceslicetracker.Options{
		EnableDeviceTaintRules:   gate.Enabled(features.DRADeviceTaintRules),
		EnableConsumableCapacity: gate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		KubeClient:               cs,
	}
	if opts.EnableDeviceTaintRules {
		opts.TaintInformer = factory.Resource().V1().DeviceTaintRules()
	}
	slices, err := resourceslicetracker.StartTracker(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("podfit: starting the ResourceSlice tracker: %w", err)
	}
	m := dynamicresources.NewDRAManager(ctx, claims, slices, factory)
	// The manager holds an extended-resource cache when DRAExtendedResource
	// is on (locked on since 1.37); nothing fills it but DeviceClass events.
	if erCache, ok := m.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache); ok && erCache != nil {
		if _, err := factory.Resource().V1().DeviceClasses().Informer().AddEventHandler(erCache); err != nil {
			return nil, fmt.Errorf("podfit: watching DeviceClasses: %w", err)
		}
	}
	v := newDRAView(m, opts.EnableConsumableCapacity)
	// The epoch counts what the plugin reads, once it reads it: claims
	// from the assume cache (after the allocated devices it feeds; only
	// the events that may free or take devices, claimEvents), slices
	// from the tracker (taint rules applied), classes from their informer.
	// Slice events also move the slice list's own epoch (slicescope.go).
	claims.AddEventHandler(v.claimEvents())
	if _, err := slices.AddEventHandler(counting(&v.epoch, &v.slices.epoch)); err != nil {
		return nil, fmt.Errorf("podfit: watching ResourceSlices: %w", err)
	}
	if _, err := factory.Resource().V1().DeviceClasses().Informer().AddEventHandler(counting(&v.epoch)); err != nil {
		return nil, fmt.Errorf("podfit: watching DeviceClasses: %w", err)
	}
	return v, nil
}

// noDevices is DynamicResources' reason when the node's free devices
// cannot satisfy the pod's claims.
const noDevices = "cannot allocate all claims"

// devicesResolvable makes a node refused for want of free devices one
// that evicting pods may cure: kube-scheduler does not preempt for devices,
// and calls it unresolvable, but Caldera's preempt and reclaim count the
// devices of a victim's claims as freed (FilterWithout).
func devicesResolvable(st *framework.Status) *framework.Status {
	if st != nil && st.Plugin == names.DynamicResources && st.Code == framework.UnschedulableAndUnresolvable &&
		len(st.Reasons) == 1 && st.Reasons[0] == noDevices {
		st.Code = framework.Unschedulable
	}
	return st
}

// discardEvents is the event recorder when the caller gives none: the
// DynamicResources plugin records an event while a device's binding
// conditions are pending.
type discardEvents struct{}

func (discardEvents) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {}
func (discardEvents) AnnotatedEventf(runtime.Object, runtime.Object, map[string]string, string, string, string, string, ...any) {
}
func (d discardEvents) WithLogger(klog.Logger) events.EventRecorderLogger { return d }

// draView is the DRA manager the DynamicResources plugin reads. It is
// kube-scheduler's, except while FilterWithout asks whether a pod would fit
// with victims gone: then the devices of the claims that only the victims
// use are not counted as allocated. It lists the slices an alike pod's
// allocator needs (slicescope.go), and signs pods with alike claims
// (signature, below).
type draView struct {
	fwk.SharedDRAManager
	claims *claimsView
	slices *slicesView
	specs  claimSpecs

	// epoch counts the events of claims that may change the free devices,
	// of slices (taint rules applied) and classes, and unreservations.
	epoch atomic.Uint64
}

func newDRAView(m fwk.SharedDRAManager, consumableCapacity bool) *draView {
	v := &draView{SharedDRAManager: m, slices: &slicesView{tracker: m.ResourceSlices()}}
	v.claims = &claimsView{ResourceClaimTracker: m.ResourceClaims(), consumableCapacity: consumableCapacity, flight: newInFlight(), epoch: &v.epoch}
	return v
}

func (v *draView) ResourceClaims() fwk.ResourceClaimTracker { return v.claims }

func (v *draView) ResourceSlices() fwk.ResourceSliceLister { return v.slices }

// claimsView is the claim tracker the plugin reads. It keeps the claims in
// flight itself (inflight.go), and leaves the devices of the freed claims
// out of the allocated devices.
type claimsView struct {
	fwk.ResourceClaimTracker
	consumableCapacity bool
	flight             *inFlight
	// epoch is the view's count of claim (and other) events.
	epoch *atomic.Uint64

	mu    sync.Mutex
	freed []*resourcev1.ResourceClaim
}

// without runs f with the claims' devices counted as free.
func (c *claimsView) without(claims []*resourcev1.ResourceClaim, f func()) {
	c.mu.Lock()
	c.freed = claims
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.freed = nil
		c.mu.Unlock()
	}()
	f()
}

func (c *claimsView) freedNow() []*resourcev1.ResourceClaim {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.freed
}

// eachDevice calls dedicated for each device the claim holds alone and
// shared for each share of a device it holds, as the allocated set counts
// them: admin access holds nothing, and a share is a device only when
// consumable capacity is off.
func (c *claimsView) eachDevice(claim *resourcev1.ResourceClaim, dedicated func(structured.DeviceID), shared func(structured.SharedDeviceID, *resourcev1.DeviceRequestAllocationResult)) {
	if claim.Status.Allocation == nil {
		return
	}
	for i := range claim.Status.Allocation.Devices.Results {
		r := &claim.Status.Allocation.Devices.Results[i]
		if r.AdminAccess != nil && *r.AdminAccess {
			continue
		}
		id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
		if c.consumableCapacity && r.ShareID != nil {
			shared(structured.MakeSharedDeviceID(id, r.ShareID), r)
			continue
		}
		dedicated(id)
	}
}

// ListAllAllocatedDevices is the tracker's devices (of the claims the
// assume cache shows allocated, since none is in flight there) and the
// devices of the claims in flight, less those the freed claims hold.
func (c *claimsView) ListAllAllocatedDevices() (sets.Set[structured.DeviceID], error) {
	// The claims in flight are read first: a claim leaves flight only after
	// the assume cache shows it allocated, so it is in one or the other.
	flying := c.flight.listed()
	all, err := c.ResourceClaimTracker.ListAllAllocatedDevices()
	if err != nil {
		return nil, err
	}
	all = merge(all, flying)
	for _, claim := range c.freedNow() {
		c.eachDevice(claim, func(id structured.DeviceID) { all.Delete(id) }, func(structured.SharedDeviceID, *resourcev1.DeviceRequestAllocationResult) {})
	}
	return all, nil
}

// GatherAllocatedState is the tracker's state (claims the assume cache
// shows allocated) with the devices of the claims in flight added, and
// those the freed claims hold taken out. The state is shared (see
// inFlight.allocated): only the plugin's allocator may read it.
func (c *claimsView) GatherAllocatedState() (*structured.AllocatedState, error) {
	s, err := c.flight.allocated(c.epoch.Load(), c.ResourceClaimTracker.GatherAllocatedState)
	freed := c.freedNow()
	if err != nil || s == nil || len(freed) == 0 {
		return s, err
	}
	out := &structured.AllocatedState{
		AllocatedDevices:         maps.Clone(s.AllocatedDevices),
		AllocatedSharedDeviceIDs: maps.Clone(s.AllocatedSharedDeviceIDs),
		AggregatedCapacity:       s.AggregatedCapacity.Clone(),
	}
	for _, claim := range freed {
		c.eachDevice(claim, func(id structured.DeviceID) { out.AllocatedDevices.Delete(id) },
			func(id structured.SharedDeviceID, r *resourcev1.DeviceRequestAllocationResult) {
				out.AllocatedSharedDeviceIDs.Delete(id)
				if r.ConsumedCapacity != nil {
					out.AggregatedCapacity.Remove(structured.NewDeviceConsumedCapacity(id.GetDeviceID(), r.ConsumedCapacity))
				}
			})
	}
	return out, nil
}

// freedBy returns the allocated claims of the victims that no other pod
// uses: evicting the victims frees their devices.
func (c *claimsView) freedBy(victims []*corev1.Pod) []*resourcev1.ResourceClaim {
	gone := sets.New[types.UID]()
	for _, v := range victims {
		gone.Insert(v.UID)
	}
	var out []*resourcev1.ResourceClaim
	seen := sets.New[types.UID]()
	for _, v := range victims {
		for i := range v.Spec.ResourceClaims {
			name, _, err := resourceclaim.Name(v, &v.Spec.ResourceClaims[i])
			if err != nil || name == nil {
				continue
			}
			claim, err := c.Get(v.Namespace, *name)
			if err != nil || claim.Status.Allocation == nil || seen.Has(claim.UID) {
				continue
			}
			onlyVictims := true
			for _, r := range claim.Status.ReservedFor {
				if !gone.Has(r.UID) {
					onlyVictims = false
				}
			}
			if onlyVictims {
				seen.Insert(claim.UID)
				out = append(out, claim)
			}
		}
	}
	return out
}

// draStamp is where the devices stand: the epoch of claim, slice and
// class events and the generation of the claims in flight. Devices chosen
// at one stamp are still free at the same stamp.
type draStamp struct{ epoch, flight uint64 }

func (v *draView) stamp() draStamp {
	return draStamp{v.epoch.Load(), v.claims.flight.generation.Load()}
}

// Signing pods with claims. kube-scheduler's plugin refuses to sign them;
// Caldera signs the pods whose claims make them alike: each claim the
// pod's own (made for it from a template), not allocated, not reserved,
// not in flight, asking for devices with exact requests only (a
// prioritized list scores nodes by what the filter chose), while every
// ResourceSlice is node-local. Such pods fit a node by its own devices
// alone, and placing one changes no other node. The signature carries the
// claims' requests and an epoch that moves with every claim, slice, class
// and taint rule event, so results kept for it end when the devices may
// have changed.

// counting is a handler that moves the counters on every event.
func counting(counters ...*atomic.Uint64) cache.ResourceEventHandler {
	bump := func(any) {
		for _, c := range counters {
			c.Add(1)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: bump, UpdateFunc: func(_, o any) { bump(o) }, DeleteFunc: bump}
}

// claimEvents moves the epoch on the claim events that may change which
// devices are free: a claim that comes allocated, goes while allocated, or
// whose allocation changes. It leaves alone a claim that comes without an
// allocation (it takes no device), an update that keeps the allocation
// (the finalizer written at bind, reservations, the informer's echo of
// what the assume cache had), and the allocation written for a claim in
// flight, whose devices were counted since its Reserve. Without that, every
// bind would end the verdicts kept for every alike pod.
func (v *draView) claimEvents() cache.ResourceEventHandler {
	bump := func() { v.epoch.Add(1) }
	allocation := func(obj any) *resourcev1.AllocationResult {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if c, ok := obj.(*resourcev1.ResourceClaim); ok {
			return c.Status.Allocation
		}
		return &resourcev1.AllocationResult{} // not a claim: count it
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if allocation(obj) != nil {
				bump()
			}
		},
		DeleteFunc: func(obj any) {
			if allocation(obj) != nil {
				bump()
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			before, after := allocation(oldObj), allocation(newObj)
			if apiequality.Semantic.DeepEqual(before, after) {
				return
			}
			if c, ok := newObj.(*resourcev1.ResourceClaim); ok && before == nil && v.claims.inFlightAs(c) {
				return
			}
			bump()
		},
	}
}

// inFlightAs reports whether the claim is in flight with the allocation
// it now has.
func (c *claimsView) inFlightAs(claim *resourcev1.ResourceClaim) bool {
	c.flight.mu.RLock()
	defer c.flight.mu.RUnlock()
	in, ok := c.flight.claims[claim.UID]
	return ok && apiequality.Semantic.DeepEqual(in.claim.Status.Allocation, claim.Status.Allocation)
}

// signature returns the fragment that makes pods with alike claims alike,
// false when the pod's claims do not qualify.
func (v *draView) signature(pod *corev1.Pod) (string, bool) {
	epoch := v.epoch.Load()
	if !v.slices.nodeLocal() {
		return "", false
	}
	resolver := v.DeviceClassResolver()
	for _, c := range pod.Spec.Containers {
		for name := range c.Resources.Requests {
			if resolver.GetDeviceClass(name) != nil {
				return "", false
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d", epoch)
	for i := range pod.Spec.ResourceClaims {
		name, mustCheckOwner, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil || name == nil || !mustCheckOwner {
			return "", false
		}
		claim, err := v.claims.Get(pod.Namespace, *name)
		if err != nil || resourceclaim.IsForPod(pod, claim, false) != nil ||
			claim.Status.Allocation != nil || len(claim.Status.ReservedFor) > 0 ||
			v.claims.GetPendingAllocation(claim.UID) != nil {
			return "", false
		}
		for _, r := range claim.Spec.Devices.Requests {
			if r.Exactly == nil {
				return "", false
			}
		}
		spec, ok := v.specs.of(claim)
		if !ok {
			return "", false
		}
		b.WriteByte('/')
		b.WriteString(spec)
	}
	return b.String(), true
}

// claimSpecs are claims' device requests as JSON, made once per claim
// version: alike pods are signed by them.
type claimSpecs struct {
	mu    sync.Mutex
	byUID map[types.UID]claimSpec
}

type claimSpec struct{ version, json string }

// maxClaimSpecs bounds the specs kept; reaching it forgets them all.
const maxClaimSpecs = 8192

func (c *claimSpecs) of(claim *resourcev1.ResourceClaim) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.byUID[claim.UID]; ok && s.version == claim.ResourceVersion {
		return s.json, true
	}
	b, err := json.Marshal(claim.Spec.Devices)
	if err != nil {
		return "", false
	}
	if c.byUID == nil || len(c.byUID) >= maxClaimSpecs {
		c.byUID = map[types.UID]claimSpec{}
	}
	c.byUID[claim.UID] = claimSpec{claim.ResourceVersion, string(b)}
	return string(b), true
}

// ClaimSeen is the UID and resourceVersion of the ResourceClaim the
// DynamicResources plugin reads under namespace/name, empty when it reads
// none (or runs with no DRA). With SlicesSeen and ClassSeen it lets a
// caller that changes DRA objects through the client wait for the plugin
// to see the change before it schedules, as the simulator does to stay
// deterministic.
func (e *Evaluator) ClaimSeen(namespace, name string) (types.UID, string) {
	if e.draView == nil {
		return "", ""
	}
	c, err := e.draView.claims.Get(namespace, name)
	if err != nil || c == nil {
		return "", ""
	}
	return c.UID, c.ResourceVersion
}

// SlicesSeen is how many ResourceSlices the DynamicResources plugin
// lists (taint rules applied), 0 with no DRA.
func (e *Evaluator) SlicesSeen() int {
	if e.draView == nil {
		return 0
	}
	s, err := e.draView.slices.tracker.ListWithDeviceTaintRules()
	if err != nil {
		return 0
	}
	return len(s)
}

// ClassSeen reports whether the DynamicResources plugin reads the
// DeviceClass.
func (e *Evaluator) ClassSeen(name string) bool {
	if e.draView == nil {
		return false
	}
	c, err := e.draView.DeviceClasses().Get(name)
	return err == nil && c != nil
}
