//go:build integration

package podfit

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	"github.com/caldera-sh/caldera/test/poll"
)

const (
	draNS     = "dra"
	gpuDriver = "gpu.example.com"
	gpuClass  = "gpu.example.com"
)

// draSlices are the devices a driver publishes: two A100s on n0, four on
// n1 (one of them held by a claim allocated before the test), two H100s on
// n3, none elsewhere.
func draSlices() []*resourcev1.ResourceSlice {
	slice := func(node, model string, n int) *resourcev1.ResourceSlice {
		s := &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: node + "-" + gpuDriver},
			Spec: resourcev1.ResourceSliceSpec{
				Driver:   gpuDriver,
				Pool:     resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1},
				NodeName: new(node),
			},
		}
		for i := range n {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{
				Name:       fmt.Sprintf("gpu-%d", i),
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: new(model)}},
			})
		}
		return s
	}
	return []*resourcev1.ResourceSlice{slice("n0", "a100", 2), slice("n1", "a100", 4), slice("n3", "h100", 2)}
}

// draSpec is one claim shape of the matrix; a trial gets its own claim.
type draSpec struct {
	name     string
	requests []resourcev1.DeviceRequest
}

func exactly(name string, count int64, cel string) resourcev1.DeviceRequest {
	r := resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{
		DeviceClassName: gpuClass, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count,
	}}
	if cel != "" {
		r.Exactly.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: cel}}}
	}
	return r
}

func draMatrix() []draSpec {
	h100 := `device.attributes["` + gpuDriver + `"].model == "h100"`
	return []draSpec{
		{name: "one", requests: []resourcev1.DeviceRequest{exactly("gpu", 1, "")}},
		{name: "h100", requests: []resourcev1.DeviceRequest{exactly("gpu", 1, h100)}},
		{name: "three", requests: []resourcev1.DeviceRequest{exactly("gpu", 3, "")}},
		{name: "two-requests", requests: []resourcev1.DeviceRequest{exactly("a", 1, ""), exactly("b", 1, "")}},
		{name: "first-available", requests: []resourcev1.DeviceRequest{{Name: "gpu", FirstAvailable: []resourcev1.DeviceSubRequest{
			{Name: "h100s", DeviceClassName: gpuClass, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2,
				Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: h100}}}},
			{Name: "any", DeviceClassName: gpuClass, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}}}},
		{name: "all", requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: gpuClass, AllocationMode: resourcev1.DeviceAllocationModeAll}}}},
	}
}

func (s draSpec) claim(name string) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: draNS, Name: name},
		Spec:       resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: s.requests}},
	}
}

func claimPod(name, claim string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: draNS, Name: name},
		Spec: corev1.PodSpec{
			// No scheduler serves this name: the pod waits for the test.
			SchedulerName:  "caldera-test",
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimName: new(claim)}},
			Containers: []corev1.Container{{Name: "main", Image: "busybox",
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpus"}}}}},
		},
	}
}

// TestDRAAllocationsMatchKubeScheduler: for each claim of the matrix, the
// nodes the evaluator (running kube-scheduler's DynamicResources plugin
// through its DRA manager) finds feasible are exactly the nodes the real
// kube-scheduler accepts the pod on; and on each such node the claim's
// allocation that the evaluator's PreBind writes (devices and node
// selector) is the one kube-scheduler writes.
func TestDRAAllocationsMatchKubeScheduler(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*testTimeout)
	defer cancel()
	cs, err := kubernetes.NewForConfig(fw.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	setUpDevices(t, ctx, cs)

	e, nodes := newEvaluator(t, ctx, cs, podfit.Options{Profile: podfit.ProfileOptions{DynamicResources: true}})
	type outcome struct {
		feasible []string
		alloc    map[string]*resourcev1.AllocationResult
	}
	ours := map[string]outcome{}
	for _, spec := range draMatrix() {
		o := outcome{alloc: map[string]*resourcev1.AllocationResult{}}
		name := spec.name + "-ours"
		pod := createClaimAndPod(t, ctx, cs, spec, name)
		// The claim reaches the evaluator through its informer.
		poll.Eventually(t, ctx, testTimeout, "the evaluator seeing claim "+name, func() (bool, string) {
			_, st := e.PreFilter(ctx, pod, nil)
			return st == nil || !strings.Contains(st.Message(), "not found"), fmt.Sprint(st)
		})
		fit, why := e.Feasible(ctx, pod)
		o.feasible = fit
		for _, n := range nodes {
			if s := why[n.Name]; s != nil {
				t.Logf("%s: not %s: %s", spec.name, n.Name, s.Message())
			}
		}
		for _, node := range fit {
			s, st := e.PreFilter(ctx, pod, nil)
			if st != nil {
				t.Fatalf("%s: PreFilter: %s", spec.name, st.Message())
			}
			ni := nodes[slices.IndexFunc(nodes, func(n *api.NodeInfo) bool { return n.Name == node })]
			if st := e.Filter(ctx, s, ni); st != nil {
				t.Fatalf("%s on %s: Filter: %s", spec.name, node, st.Message())
			}
			if st := e.Reserve(ctx, s, node); st != nil {
				t.Fatalf("%s on %s: Reserve: %s", spec.name, node, st.Message())
			}
			if st := e.PreBind(ctx, s, node); st != nil {
				t.Fatalf("%s on %s: PreBind: %s", spec.name, node, st.Message())
			}
			c, err := cs.ResourceV1().ResourceClaims(draNS).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			o.alloc[node] = c.Status.Allocation
			if !hasPod(c, pod) {
				t.Errorf("%s on %s: claim reserved for %v, want the pod", spec.name, node, c.Status.ReservedFor)
			}
			// Free the claim for the next node: deallocate it as the
			// resourceclaim controller would, and wait until the
			// evaluator sees it free.
			deallocate(t, ctx, cs, name)
			poll.Eventually(t, ctx, testTimeout, "the evaluator seeing "+name+" free", func() (bool, string) {
				got, _ := e.Feasible(ctx, pod)
				return cmp.Equal(got, fit), fmt.Sprintf("feasible %v", got)
			})
		}
		ours[spec.name] = o
		deleteClaimAndPod(t, ctx, cs, name)
	}

	ks, err := controlplane.StartKubeScheduler(ctx, fw.Cluster.APIServer, controlplane.KubeSchedulerOptions{
		BinDir: fw.BinDir, Dir: filepath.Join(fw.Dir, "kube-scheduler-dra"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ks.Stop(); err != nil {
			t.Error(err)
		}
	}()
	for _, spec := range draMatrix() {
		t.Run(spec.name, func(t *testing.T) {
			var theirs []string
			for _, node := range nodeNames() {
				alloc := draTrial(t, ctx, cs, spec, node)
				if alloc == nil {
					continue
				}
				theirs = append(theirs, node)
				if diff := cmp.Diff(withoutTime(alloc), withoutTime(ours[spec.name].alloc[node])); diff != "" {
					t.Errorf("allocation on %s (-kube-scheduler,+podfit):\n%s", node, diff)
				}
			}
			if diff := cmp.Diff(theirs, ours[spec.name].feasible); diff != "" {
				t.Errorf("feasible nodes (-kube-scheduler,+podfit):\n%s", diff)
			}
			t.Logf("feasible: %v", theirs)
		})
	}
}

// setUpDevices creates the namespace, the DeviceClass, the slices and the
// claim "held", allocated one of n1's devices as a scheduler would have.
func setUpDevices(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: draNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	class := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: gpuClass},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: `device.driver == "` + gpuDriver + `"`}}}},
	}
	if _, err := cs.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range draSlices() {
		if _, err := cs.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	held, err := cs.ResourceV1().ResourceClaims(draNS).Create(ctx, draSpec{requests: []resourcev1.DeviceRequest{exactly("gpu", 1, "")}}.claim("held"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held.Status.Allocation = &resourcev1.AllocationResult{
		Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: gpuDriver, Pool: "n1", Device: "gpu-0"},
		}},
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}},
		}}}},
	}
	if _, err := cs.ResourceV1().ResourceClaims(draNS).UpdateStatus(ctx, held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createClaimAndPod(t *testing.T, ctx context.Context, cs kubernetes.Interface, spec draSpec, name string) *corev1.Pod {
	t.Helper()
	if _, err := cs.ResourceV1().ResourceClaims(draNS).Create(ctx, spec.claim(name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods(draNS).Create(ctx, claimPod(name, name), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// deallocate clears the claim's allocation and reservation and drops the
// scheduler's delete-protection finalizer, as kube-controller-manager's
// resourceclaim controller does once no pod uses the claim.
func deallocate(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string) {
	t.Helper()
	c, err := cs.ResourceV1().ResourceClaims(draNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Status.Allocation, c.Status.ReservedFor, c.Status.Devices = nil, nil, nil
	if c, err = cs.ResourceV1().ResourceClaims(draNS).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ResourceV1().ResourceClaims(draNS).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deleteClaimAndPod(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string) {
	t.Helper()
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	if err := cs.CoreV1().Pods(draNS).Delete(ctx, name, now); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ResourceV1().ResourceClaims(draNS).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.ResourceV1().ResourceClaims(draNS).Delete(ctx, name, now); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, ctx, testTimeout, "deletion of "+name, func() (bool, string) {
		if _, err := cs.CoreV1().Pods(draNS).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Sprintf("the pod is there (err %v)", err)
		}
		_, err := cs.ResourceV1().ResourceClaims(draNS).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("the claim is there (err %v)", err)
	})
}

// draTrial runs one kube-scheduler trial: the spec's claim and a pod for
// default-scheduler pinned to the node. It returns the claim's allocation
// when kube-scheduler bound the pod there, nil when it marked the pod
// Unschedulable.
func draTrial(t *testing.T, ctx context.Context, cs kubernetes.Interface, spec draSpec, node string) *resourcev1.AllocationResult {
	t.Helper()
	name := spec.name + "-" + node
	if _, err := cs.ResourceV1().ResourceClaims(draNS).Create(ctx, spec.claim(name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := pinned(claimPod(name, name), name, node)
	pod.Namespace = draNS
	if _, err := cs.CoreV1().Pods(draNS).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var alloc *resourcev1.AllocationResult
	poll.Eventually(t, ctx, testTimeout, "kube-scheduler's decision on "+name, func() (bool, string) {
		p, err := cs.CoreV1().Pods(draNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if p.Spec.NodeName != "" {
			c, err := cs.ResourceV1().ResourceClaims(draNS).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if p.Spec.NodeName == node {
				alloc = c.Status.Allocation
			}
			return true, ""
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				// A scheduler that has not seen the new claim yet says it
				// is missing, and tries again once it sees it.
				if strings.Contains(c.Message, "not found") {
					return false, c.Message
				}
				return true, c.Message
			}
		}
		return false, "neither bound nor unschedulable"
	})
	deleteClaimAndPod(t, ctx, cs, name)
	return alloc
}

func hasPod(c *resourcev1.ResourceClaim, pod *corev1.Pod) bool {
	for _, r := range c.Status.ReservedFor {
		if r.Resource == "pods" && r.Name == pod.Name && r.UID == pod.UID {
			return true
		}
	}
	return false
}

// withoutTime drops the allocation's timestamp, the one field two
// schedulers write differently.
func withoutTime(a *resourcev1.AllocationResult) *resourcev1.AllocationResult {
	if a == nil {
		return nil
	}
	a = a.DeepCopy()
	a.AllocationTimestamp = nil
	return a
}
