package scenario

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	clienttesting "k8s.io/client-go/testing"

	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	"github.com/caldera-sh/caldera/pkg/sim/trace"
)

// draDriver names the simulated DRA driver, and the DeviceClass that
// selects its devices.
const draDriver = "gpu.sim.caldera.sh"

// draCardMemory is a simulated DRA device's memory: 1000Mi, so that a
// task's gpu_milli asks for as many Mi.
var draCardMemory = resource.MustParse("1000Mi")

// draClaim names a pod's claim: the one claim of its "gpu" template.
const draClaim = "gpu"

// devices publishes the DRA objects of a run (the DeviceClass, a
// ResourceSlice per GPU node, a ResourceClaim per GPU pod) through the
// client whose informers feed the scheduler's DynamicResources plugin,
// and, before each cycle, waits until the plugin reads each change: the
// informers deliver on their own goroutines, and a cycle that ran ahead
// of them would make the run differ from one run to the next.
type devices struct {
	// ctx is the run's.
	ctx context.Context
	cs  kubernetes.Interface
	fit *podfit.Evaluator
	// claimStore is the informer's store of claims, which the plugin's claim
	// cache follows.
	claimStore resourcelisters.ResourceClaimLister
	// slices is how many ResourceSlices were published.
	slices int
	// changed are the claims changed since the plugin last caught up:
	// the resourceVersion it must read, "" for a claim deleted.
	changed map[types.NamespacedName]string
	// err is the first change that failed, for sync to report.
	err error
	// held is the memory (Mi) each device's claims hold, by pool and
	// device; devices how many were published. placements counts the
	// claims allocated, overcommits the devices that one of them took past
	// their memory, off its pod's node, or short of its count.
	held                             map[string]int64
	devices, placements, overcommits int64
}

func newDevices(ctx context.Context, su *setup) (*devices, error) {
	d := &devices{ctx: ctx, cs: su.cs, fit: su.fit, claimStore: su.factory.Resource().V1().ResourceClaims().Lister(),
		changed: map[types.NamespacedName]string{}, held: map[string]int64{}}
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: draDriver},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: `device.driver == "` + draDriver + `"`}}}}}
	if _, err := d.cs.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("the simulated DeviceClass: %w", err)
	}
	return d, nil
}

// addNode publishes the node's GPU cards, one device each, in a
// ResourceSlice of the node's own pool.
func (d *devices) addNode(node, model string, cards int64) error {
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-" + draDriver},
		Spec: resourcev1.ResourceSliceSpec{Driver: draDriver, NodeName: &node,
			Pool: resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1}}}
	shared := true
	for i := range cards {
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{
			Name:                     fmt.Sprintf("gpu-%d", i),
			AllowMultipleAllocations: &shared,
			Attributes:               map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: &model}},
			Capacity:                 map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: draCardMemory}},
		})
	}
	if _, err := d.cs.ResourceV1().ResourceSlices().Create(d.ctx, s, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("the ResourceSlice of node %s: %w", node, err)
	}
	d.slices++
	d.devices += cards
	if d.slices%watchBatch == 0 {
		return d.sync(d.ctx)
	}
	return nil
}

// claim gives a pod that asks for DRA devices its claim, as the
// resource claim controller makes one from the pod's template: owned by
// the pod, named in its status. A task sharing a GPU asks for one device
// with its gpu_milli of the memory, a task of whole GPUs for as many
// devices, each whole. The pod's UID must be set. A failure is kept for
// sync to report.
func (d *devices) claim(p *corev1.Pod) {
	milli := podRequests(p)[trace.GPUMilli]
	if milli.IsZero() {
		return
	}
	count, memory := int64(1), resource.MustParse(fmt.Sprintf("%dMi", milli.Value()))
	if milli.Value() >= 1000 {
		count, memory = milli.Value()/1000, draCardMemory
	}
	name := p.Name + "-" + draClaim
	c := &resourcev1.ResourceClaim{
		// The API server would give the UID.
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: name, UID: types.UID(p.Namespace + "/" + name),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: &[]bool{true}[0]}}},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: draClaim,
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: draDriver, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count,
				Capacity: &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{"memory": memory}}}}}}},
	}
	created, err := d.cs.ResourceV1().ResourceClaims(p.Namespace).Create(d.ctx, c, metav1.CreateOptions{})
	if err != nil {
		if d.err == nil {
			d.err = fmt.Errorf("the ResourceClaim of pod %s: %w", p.Name, err)
		}
		return
	}
	template := draClaim
	p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: draClaim, ResourceClaimTemplateName: &template}}
	p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: draClaim, ResourceClaimName: &name}}
	d.note(types.NamespacedName{Namespace: p.Namespace, Name: name}, created.ResourceVersion)
}

// watchBatch is how many changes the run makes before it waits for the
// informers to take them: the in-memory client's watches hold 100 events.
const watchBatch = 25

// note records a claim's change for sync to wait on, and waits once
// watchBatch are pending.
func (d *devices) note(key types.NamespacedName, version string) {
	d.changed[key] = version
	if len(d.changed) >= watchBatch {
		if err := d.sync(d.ctx); err != nil && d.err == nil {
			d.err = err
		}
	}
}

// bound notes that a pod's claim was allocated and reserved for it (the
// plugin's PreBind wrote its status): the plugin must read that version.
// It checks the allocation: the devices asked for, on the pod's node,
// none past its memory.
func (d *devices) bound(p *corev1.Pod) {
	for _, c := range d.claims(p) {
		d.note(types.NamespacedName{Namespace: p.Namespace, Name: c.Name}, c.ResourceVersion)
		d.placements++
		want := c.Spec.Devices.Requests[0].Exactly.Count
		if c.Status.Allocation == nil || int64(len(c.Status.Allocation.Devices.Results)) != want {
			d.overcommits++
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			mem := r.ConsumedCapacity["memory"]
			key := r.Pool + "/" + r.Device
			d.held[key] += mem.Value() >> 20
			if r.Pool != p.Spec.NodeName || d.held[key] > draCardMemory.Value()>>20 {
				d.overcommits++
			}
		}
	}
}

// claims are the pod's claims as the client has them.
func (d *devices) claims(p *corev1.Pod) []*resourcev1.ResourceClaim {
	var out []*resourcev1.ResourceClaim
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.ResourceClaimName == nil {
			continue
		}
		if c, err := d.cs.ResourceV1().ResourceClaims(p.Namespace).Get(d.ctx, *s.ResourceClaimName, metav1.GetOptions{}); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// heldShare is the share of the devices' memory their claims hold, 0
// with no devices.
func (d *devices) heldShare() float64 {
	if d == nil || d.devices == 0 {
		return 0
	}
	var held int64
	for _, mi := range d.held {
		held += mi
	}
	return float64(held) / float64(d.devices*(draCardMemory.Value()>>20))
}

// release deletes a pod's claims once it is gone or done, as the
// resource claim controller does with the claims it made for the pod.
func (d *devices) release(p *corev1.Pod) {
	for _, c := range d.claims(p) {
		if a := c.Status.Allocation; a != nil && p.Spec.NodeName != "" {
			for _, r := range a.Devices.Results {
				mem := r.ConsumedCapacity["memory"]
				d.held[r.Pool+"/"+r.Device] -= mem.Value() >> 20
			}
		}
		if err := d.cs.ResourceV1().ResourceClaims(p.Namespace).Delete(d.ctx, c.Name, metav1.DeleteOptions{}); err == nil {
			d.note(types.NamespacedName{Namespace: p.Namespace, Name: c.Name}, "")
		}
	}
}

// sync waits until the DynamicResources plugin reads the DeviceClass,
// every ResourceSlice and every claim as changed. The informers are in
// memory and deliver within microseconds; a minute without progress means
// they stopped, an error.
func (d *devices) sync(ctx context.Context) error {
	if d.err != nil {
		return d.err
	}
	deadline := time.Now().Add(time.Minute)
	for !d.fit.ClassSeen(draDriver) || d.fit.SlicesSeen() != d.slices {
		if err := d.wait(ctx, deadline, fmt.Sprintf("%d ResourceSlices and the DeviceClass %s", d.slices, draDriver)); err != nil {
			return err
		}
	}
	for key, want := range d.changed {
		for !d.claimAt(key, want) {
			if err := d.wait(ctx, deadline, d.claimState(key, want)); err != nil {
				return err
			}
		}
	}
	clear(d.changed)
	return nil
}

// wait yields to the informers' goroutines until the deadline.
func (d *devices) wait(ctx context.Context, deadline time.Time, what string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if time.Now().After(deadline) {
		return fmt.Errorf("the scheduler's DRA plugin did not see %s within a minute", what)
	}
	goruntime.Gosched()
	time.Sleep(20 * time.Microsecond)
	return nil
}

// claimAt reports whether both the informer's store and the plugin's
// claim cache have the claim at least at the resourceVersion, or (want
// "") no longer have it.
func (d *devices) claimAt(key types.NamespacedName, want string) bool {
	var stored, storedVersion string
	if c, err := d.claimStore.ResourceClaims(key.Namespace).Get(key.Name); err == nil {
		stored, storedVersion = string(c.UID), c.ResourceVersion
	}
	uid, version := d.fit.ClaimSeen(key.Namespace, key.Name)
	if want == "" {
		return stored == "" && uid == ""
	}
	return stored != "" && uid != "" && atLeast(storedVersion, want) && atLeast(version, want)
}

// claimState says where a claim stands, for an error.
func (d *devices) claimState(key types.NamespacedName, want string) string {
	stored := "none"
	if c, err := d.claimStore.ResourceClaims(key.Namespace).Get(key.Name); err == nil {
		stored = c.ResourceVersion
	}
	_, version := d.fit.ClaimSeen(key.Namespace, key.Name)
	if want == "" {
		want = "none"
	}
	return fmt.Sprintf("ResourceClaim %s at version %s (the informer has %s, the plugin %q)", key, want, stored, version)
}

// atLeast compares resourceVersions, which the in-memory client counts.
func atLeast(version, want string) bool {
	v, err1 := strconv.ParseUint(version, 10, 64)
	w, err2 := strconv.ParseUint(want, 10, 64)
	return err1 == nil && err2 == nil && v >= w
}

// versioned makes the in-memory client give each object it stores a
// resourceVersion, as the API server does (it counts them, but stores
// the objects as given): the plugin's claim cache orders claims by it.
func versioned(cs *fake.Clientset) {
	var last atomic.Uint64
	cs.PrependReactor("*", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if verb := a.GetVerb(); verb != "create" && verb != "update" {
			return false, nil, nil
		}
		if w, ok := a.(interface{ GetObject() runtime.Object }); ok {
			if m, err := meta.Accessor(w.GetObject()); err == nil {
				m.SetResourceVersion(strconv.FormatUint(last.Add(1), 10))
			}
		}
		return false, nil, nil
	})
}
