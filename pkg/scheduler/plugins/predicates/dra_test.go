package predicates

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit/evaluatortest"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestPipelinedClaimsReleased: a task with a claim pipelined on the node
// holds the node's one device for the rest of the cycle (another task's
// claim finds none), and lets it go when the cycle ends, so that the next
// cycle can place the task again.
func TestPipelinedClaimsReleased(t *testing.T) {
	node := "n0"
	objs := []runtime.Object{
		&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: benchDriver},
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: `device.driver == "` + benchDriver + `"`}}}}},
		&resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: resourcev1.ResourceSliceSpec{
			Driver: benchDriver, Pool: resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1}, NodeName: &node,
			Devices: []resourcev1.Device{{Name: "gpu-0"}}}},
	}
	o := api.Objects{
		Nodes:  []*corev1.Node{st.MakeNode(node).Alloc("cpu", "4", "memory", "8Gi", "pods", "110").Obj()},
		Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()},
	}
	for _, name := range []string{"first", "second"} {
		pod := st.MakePod("ns", name).Group(name).Req("cpu", "1").Obj()
		pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &pod.Name}}
		o.Pods = append(o.Pods, pod)
		o.PodGroups = append(o.PodGroups, schedtesting.MakePodGroup(name, "ns").MinMember(1).Queue("default").Phase(schedulingv1beta1.PodGroupInqueue).Obj())
		objs = append(objs, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: pod.UID + "-claim"},
			Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
				Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: benchDriver, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}}}}}})
	}
	fit := evaluatortest.NewEvaluatorWith(t, podfit.Options{Profile: podfit.ProfileOptions{DynamicResources: true}}, objs...)
	waitDevicesSeen(t, fit, o, objs)
	pl, err := New(nil, &framework.Handle{PodFit: fit})
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*Plugin)
	tiers := []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: p}}}}
	task := func(snap *api.Snapshot, name string) *api.TaskInfo {
		for _, j := range snap.Jobs {
			for _, tk := range j.Tasks {
				if tk.Name == name {
					return tk
				}
			}
		}
		t.Fatalf("no task %s", name)
		return nil
	}

	snap := api.Build(o)
	ssn := framework.OpenSession(t.Context(), snap, tiers, framework.Options{})
	first, second, n := task(snap, "first"), task(snap, "second"), snap.Nodes[node]
	if s := ssn.PrePredicate(first); s != nil {
		t.Fatalf("first: %s", s.Message())
	}
	if s := ssn.Predicate(first, n); s != nil {
		t.Fatalf("first on %s: %s", node, s.Message())
	}
	stmt := ssn.NewStatement()
	if err := stmt.Pipeline(first, n); err != nil {
		t.Fatal(err)
	}
	stmt.Commit()
	if s := ssn.PrePredicate(second); s != nil {
		t.Fatalf("second: %s", s.Message())
	}
	if s := ssn.Predicate(second, n); s == nil || !strings.Contains(s.Message(), "cannot allocate all claims") {
		t.Errorf("second on %s while first holds its device: %v, want no device", node, s)
	}
	ssn.Close()

	snap = api.Build(o)
	ssn = framework.OpenSession(t.Context(), snap, tiers, framework.Options{})
	defer ssn.Close()
	first = task(snap, "first")
	if s := ssn.PrePredicate(first); s != nil {
		t.Fatalf("first in the next cycle: %s, want its claim free to allocate again", s.Message())
	}
	if s := ssn.Predicate(first, snap.Nodes[node]); s != nil {
		t.Errorf("first on %s in the next cycle: %s", node, s.Message())
	}
}

// TestAlikeClaimPodsOneSearch: seven single-pod jobs whose claims (one
// GPU each, from a template) make them alike, on three nodes of two GPUs:
// they share one search of the nodes (they are signed alike), six are
// placed, two per node, and the seventh finds no device, so no GPU is
// given twice. The cycle lets a placed pod's state go.
func TestAlikeClaimPodsOneSearch(t *testing.T) {
	o, objs := deviceCluster("dra", 3, 2, 7)
	fit := evaluatortest.NewEvaluatorWith(t, podfit.Options{Profile: podfit.ProfileOptions{DynamicResources: true}}, objs...)
	waitDevicesSeen(t, fit, o, objs)
	g, err := gang.New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := New(nil, &framework.Handle{PodFit: fit})
	if err != nil {
		t.Fatal(err)
	}
	snap := api.Build(o)
	var sigs []string
	for _, j := range snap.Jobs {
		for _, tk := range j.Tasks {
			sig, ok := fit.Signature(t.Context(), tk.Pod)
			if !ok {
				t.Fatalf("%s is not signed", tk.Name)
			}
			sigs = append(sigs, sig)
		}
	}
	for _, s := range sigs[1:] {
		if s != sigs[0] {
			t.Fatalf("alike claim pods signed differently:\n%s\n%s", sigs[0], s)
		}
	}
	rec := binds{}
	ssn := framework.OpenSession(t.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: g}, {Plugin: pl}}}},
		framework.Options{Now: time.Unix(0, 0), Sink: rec})
	allocate.New().Execute(ssn)
	// A placed pod's state, with the device allocations its Filter kept
	// for each node, is no longer the cycle's to hold.
	if states, ok := framework.ReadState(ssn, stateKey); ok {
		for _, j := range snap.Jobs {
			for _, tk := range j.Tasks {
				if _, held := states[tk.UID]; held && rec[tk.Name] != "" {
					t.Errorf("the cycle still holds the state of %s, placed on %s", tk.Name, rec[tk.Name])
				}
			}
		}
	}
	ssn.Close()
	perNode := map[string]int{}
	for _, n := range rec {
		perNode[n]++
	}
	if len(rec) != 6 || len(perNode) != 3 || perNode["n0000"] != 2 || perNode["n0001"] != 2 || perNode["n0002"] != 2 {
		t.Errorf("placed %d: %v, want 6, two per node", len(rec), perNode)
	}
}

// TestClaimSignatures: pods whose claims are not their own, are
// allocated, or ask with a prioritized list are not signed. (That a slice
// event ends the results kept for alike pods, TestDRAExample shows on an
// API server: its fourth GPU is found.)
func TestClaimSignatures(t *testing.T) {
	o, objs := deviceCluster("dra", 1, 2, 4)
	named := o.Pods[1]
	named.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: new(named.Name)}}
	named.Status.ResourceClaimStatuses = nil
	for _, obj := range objs {
		c, ok := obj.(*resourcev1.ResourceClaim)
		if !ok {
			continue
		}
		switch c.Name {
		case o.Pods[2].Name:
			c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
				{Request: "gpu", Driver: benchDriver, Pool: "n0000", Device: "gpu-0"}}}}
		case o.Pods[3].Name:
			c.Spec.Devices.Requests = []resourcev1.DeviceRequest{{Name: "gpu", FirstAvailable: []resourcev1.DeviceSubRequest{
				{Name: "one", DeviceClassName: benchDriver, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}}}}
		}
	}
	fit := evaluatortest.NewEvaluatorWith(t, podfit.Options{Profile: podfit.ProfileOptions{DynamicResources: true}}, objs...)
	waitDevicesSeen(t, fit, api.Objects{Nodes: o.Nodes, Pods: o.Pods[:1]}, objs)
	if _, ok := fit.Signature(t.Context(), o.Pods[0]); !ok {
		t.Fatal("a pod with its own unallocated claim is not signed")
	}
	for i, why := range map[int]string{1: "a named claim", 2: "an allocated claim", 3: "a prioritized list"} {
		if sig, ok := fit.Signature(t.Context(), o.Pods[i]); ok {
			t.Errorf("pod with %s signed %q", why, sig)
		}
	}
}

// TestSliceChangeEndsKeptVerdicts: a signed claim pod's verdict on a node
// is kept across cycles while the node does not change; when the node's
// only GPU is withdrawn (its slice deleted), the node's pods and
// generation stay the same, yet the next cycle finds no device there.
func TestSliceChangeEndsKeptVerdicts(t *testing.T) {
	o, objs := deviceCluster("dra", 1, 1, 1)
	fit, cs := evaluatortest.NewEvaluatorAndClient(t, podfit.Options{Profile: podfit.ProfileOptions{DynamicResources: true}}, objs...)
	waitDevicesSeen(t, fit, o, objs)
	pl, err := New(nil, &framework.Handle{PodFit: fit})
	if err != nil {
		t.Fatal(err)
	}
	tiers := []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: pl}}}}
	cycle := func() *framework.Status {
		snap := api.Build(o)
		ssn := framework.OpenSession(t.Context(), snap, tiers, framework.Options{})
		defer ssn.Close()
		for _, j := range snap.Jobs {
			for _, tk := range j.Tasks {
				if s := ssn.PrePredicate(tk); s != nil {
					return s
				}
				return ssn.Predicate(tk, snap.Nodes["n0000"])
			}
		}
		t.Fatal("no task")
		return nil
	}
	if s := cycle(); s != nil {
		t.Fatalf("first cycle: %s", s.Message())
	}
	before, ok := fit.Signature(t.Context(), o.Pods[0])
	if !ok {
		t.Fatal("the pod is not signed")
	}
	if err := cs.ResourceV1().ResourceSlices().Delete(t.Context(), "n0000", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 10*time.Second, "the evaluator seeing the slice go", func() (bool, string) {
		after, _ := fit.Signature(t.Context(), o.Pods[0])
		return after != before, after
	})
	if s := cycle(); s == nil || !strings.Contains(s.Message(), "cannot allocate all claims") {
		t.Errorf("after the GPU is withdrawn: %v, want no device", s)
	}
}

// TestDeviceScope: an alike pod's allocator is built over the slices of the
// nodes its signature has no kept verdict for. A node outside that scope is
// still judged on its devices: when it changed after PreFilter it is
// filtered with every slice, and Reserve on it takes one of its devices.
// Devices reserved that way count for the pods after.
func TestDeviceScope(t *testing.T) {
	o, objs := deviceCluster("dra", 3, 2, 6)
	fit := evaluatortest.NewEvaluatorWith(t, podfit.Options{Profile: podfit.ProfileOptions{DynamicResources: true}}, objs...)
	waitDevicesSeen(t, fit, o, objs)
	ctx := t.Context()
	snap := api.Build(o)
	nodes := snap.NodeList
	fit.SetNodes(nodes)
	pre := func(i int) framework.PodFitState {
		t.Helper()
		pod := o.Pods[i]
		sig, ok := fit.Signature(ctx, pod)
		if !ok {
			t.Fatalf("%s is not signed", pod.Name)
		}
		s, status := fit.PreFilter(ctx, pod, func() (string, bool) { return sig, ok })
		if status != nil {
			t.Fatalf("PreFilter %s: %v", pod.Name, status)
		}
		return s
	}
	// reserve places the pod as a cycle does: Reserve, then the task on
	// the node, which moves the node's generation.
	reserve := func(s framework.PodFitState, i int, node *api.NodeInfo) {
		t.Helper()
		if status := fit.Reserve(ctx, s, node.Name); status != nil {
			t.Fatalf("Reserve %s on %s: %v", o.Pods[i].Name, node.Name, status)
		}
		pod := o.Pods[i].DeepCopy()
		pod.Spec.NodeName = node.Name
		task := api.NewTaskInfo(pod, "")
		task.Status = api.Allocated
		node.AddTask(task)
		fit.NotePlaced(pod)
	}
	// The first pod is filtered on every node: its verdicts are kept.
	s0 := pre(0)
	for _, n := range nodes {
		if status := fit.Filter(ctx, s0, n); status != nil {
			t.Fatalf("%s on %s: %v", o.Pods[0].Name, n.Name, status)
		}
	}
	// Every verdict is kept for the second pod, so its allocator holds no
	// node's slices; Reserve on n0002 scopes it to that node.
	reserve(pre(1), 1, nodes[2])
	// n0002 changed: the third pod is filtered there and finds the one
	// device left; n0001 changes after its PreFilter, outside its scope,
	// and must still fit on its devices.
	s2 := pre(2)
	filler := st.MakePod("ns", "cpu-only").Req("cpu", "1").Node("n0001").Phase(corev1.PodRunning).Obj()
	nodes[1].AddTask(api.NewTaskInfo(filler, ""))
	if status := fit.Filter(ctx, s2, nodes[1]); status != nil {
		t.Fatalf("%s on n0001, changed after PreFilter: %v, want it to fit", o.Pods[2].Name, status)
	}
	if status := fit.Filter(ctx, s2, nodes[2]); status != nil {
		t.Fatalf("%s on n0002 with one device left: %v, want it to fit", o.Pods[2].Name, status)
	}
	reserve(s2, 2, nodes[2])
	// n0002's two devices are in flight now.
	s3 := pre(3)
	if status := fit.Filter(ctx, s3, nodes[2]); status == nil || !strings.Contains(status.Message(), "cannot allocate all claims") {
		t.Fatalf("%s on n0002 with both devices reserved: %v, want cannot allocate all claims", o.Pods[3].Name, status)
	}
	if status := fit.Filter(ctx, s3, nodes[0]); status != nil {
		t.Fatalf("%s on n0000: %v, want it to fit", o.Pods[3].Name, status)
	}
}
