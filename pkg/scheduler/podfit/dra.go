package podfit

import (
	"context"
	"encoding/json"
	"fmt"
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
	// from the assume cache (after the allocated devices it feeds), slices
	// from the tracker (taint rules applied), classes from their informer.
	count := v.countEvent()
	claims.AddEventHandler(count)
	if _, err := slices.AddEventHandler(count); err != nil {
		return nil, fmt.Errorf("podfit: watching ResourceSlices: %w", err)
	}
	if _, err := factory.Resource().V1().DeviceClasses().Informer().AddEventHandler(count); err != nil {
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
// use are not counted as allocated. It also signs pods with alike claims
// (signature, below).
type draView struct {
	fwk.SharedDRAManager
	claims *claimsView

	// epoch counts the events of claims, slices (taint rules applied) and
	// classes, and unreservations; local says whether every slice was
	// node-local at localEpoch.
	epoch      atomic.Uint64
	localMu    sync.Mutex
	local      bool
	localKnown bool
	localEpoch uint64
}

func newDRAView(m fwk.SharedDRAManager, consumableCapacity bool) *draView {
	return &draView{SharedDRAManager: m, claims: &claimsView{ResourceClaimTracker: m.ResourceClaims(), consumableCapacity: consumableCapacity}}
}

func (v *draView) ResourceClaims() fwk.ResourceClaimTracker { return v.claims }

// claimsView leaves the devices of the freed claims out of the allocated
// devices.
type claimsView struct {
	fwk.ResourceClaimTracker
	consumableCapacity bool

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

func (c *claimsView) ListAllAllocatedDevices() (sets.Set[structured.DeviceID], error) {
	all, err := c.ResourceClaimTracker.ListAllAllocatedDevices()
	freed := c.freedNow()
	if err != nil || len(freed) == 0 {
		return all, err
	}
	all = all.Clone()
	for _, claim := range freed {
		c.eachDevice(claim, func(id structured.DeviceID) { all.Delete(id) }, func(structured.SharedDeviceID, *resourcev1.DeviceRequestAllocationResult) {})
	}
	return all, nil
}

func (c *claimsView) GatherAllocatedState() (*structured.AllocatedState, error) {
	s, err := c.ResourceClaimTracker.GatherAllocatedState()
	freed := c.freedNow()
	if err != nil || len(freed) == 0 || s == nil {
		return s, err
	}
	out := &structured.AllocatedState{
		AllocatedDevices:         s.AllocatedDevices.Clone(),
		AllocatedSharedDeviceIDs: s.AllocatedSharedDeviceIDs.Clone(),
		AggregatedCapacity:       s.AggregatedCapacity.Clone(),
	}
	for _, claim := range freed {
		c.eachDevice(claim, func(id structured.DeviceID) { out.AllocatedDevices.Delete(id) },
			func(id structured.SharedDeviceID, r *resourcev1.DeviceRequestAllocationResult) {
				out.AllocatedSharedDeviceIDs.Delete(id)
				if r.ConsumedCapacity != nil && out.AggregatedCapacity != nil {
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

// countEvent is a handler that moves the epoch on every event.
func (v *draView) countEvent() cache.ResourceEventHandler {
	bump := func(any) { v.epoch.Add(1) }
	return cache.ResourceEventHandlerFuncs{AddFunc: bump, UpdateFunc: func(_, o any) { bump(o) }, DeleteFunc: bump}
}

// nodeLocal reports whether every slice publishes devices of one node,
// worked out once per epoch.
func (v *draView) nodeLocal() bool {
	epoch := v.epoch.Load()
	v.localMu.Lock()
	defer v.localMu.Unlock()
	if v.localKnown && v.localEpoch == epoch {
		return v.local
	}
	slices, err := v.ResourceSlices().ListWithDeviceTaintRules()
	if err != nil {
		return false
	}
	local := true
	for _, s := range slices {
		if s.Spec.NodeName == nil || *s.Spec.NodeName == "" {
			local = false
			break
		}
	}
	v.local, v.localEpoch, v.localKnown = local, epoch, true
	return local
}

// signature returns the fragment that makes pods with alike claims alike,
// false when the pod's claims do not qualify.
func (v *draView) signature(pod *corev1.Pod) (string, bool) {
	epoch := v.epoch.Load()
	if !v.nodeLocal() {
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
	specs := make([]resourcev1.DeviceClaim, 0, len(pod.Spec.ResourceClaims))
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
		specs = append(specs, claim.Spec.Devices)
	}
	b, err := json.Marshal(specs)
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%d/%s", epoch, b), true
}
