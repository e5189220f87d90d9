//go:build integration

package scheduler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

const (
	draConf          = "../../../examples/scheduler/dra.conf"
	draClassFile     = "../../../examples/dra/gpu-deviceclass.yaml"
	draTemplateFile  = "../../../examples/dra/single-gpu-claim-template.yaml"
	draTrainingFile  = "../../../examples/batch/dra-training.yaml"
	exampleGPUDriver = "gpu.example.com"
)

// gpuSlice is the ResourceSlice the example driver publishes for a node
// with n GPUs.
func gpuSlice(node string, n int, generation int64) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   exampleGPUDriver,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: generation, ResourceSliceCount: 1},
			NodeName: new(node),
		},
	}
	for i := range n {
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i)})
	}
	return s
}

func readExample[T any](t *testing.T, path string) *T {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var obj T
	if err := yaml.UnmarshalStrict(raw, &obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &obj
}

// TestDRAExample runs the documented example (docs/dra.md):
// examples/batch/dra-training.yaml, four workers of one GPU each from the
// single-gpu claim template, under examples/scheduler/dra.conf, with
// kube-controller-manager's resourceclaim controller making the claims.
// The example driver publishes three GPUs: the gang does not fit, and
// none of its claims is allocated (the scheduler says why). With a fourth
// GPU published, every worker is bound, each claim allocated one GPU of
// its pod's node, reserved for that pod, no GPU twice.
func TestDRAExample(t *testing.T) {
	const ns = "dra-example"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	ctx := t.Context()

	nodes := []string{ns + "-0", ns + "-1"}
	labelledNodes(t, ns, len(nodes), "8")
	startDRADriver(t, ns, map[string]int{nodes[0]: 2, nodes[1]: 1})
	runSchedulerFile(t, draConf)

	_, pg := createExampleJob(t, ns, draTrainingFile)
	// Every worker has its claim; then the scheduler tries the gang with
	// the claims and finds three GPUs for four.
	poll.Eventually(t, ctx, 60*time.Second, "a claim made for every worker", func() (bool, string) {
		pods := listPods(t, ns)
		for _, p := range pods {
			if claimOf(p) == "" {
				return false, p.Name + " has no claim yet"
			}
		}
		return len(pods) == 4, describePods(pods)
	})
	waitUnschedulable(t, pg, "the gang told its claims cannot all be allocated", "cannot allocate all claims")
	for _, p := range listPods(t, ns) {
		if p.Spec.NodeName != "" {
			t.Errorf("%s bound to %s while its gang does not fit", p.Name, p.Spec.NodeName)
		}
		c, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, claimOf(p), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Status.Allocation != nil {
			t.Errorf("claim %s of %s allocated %+v while its gang does not fit", c.Name, p.Name, c.Status.Allocation.Devices.Results)
		}
	}

	// The driver publishes a second GPU on the second node.
	if _, err := cs.ResourceV1().ResourceSlices().Update(ctx, withVersion(t, cs, gpuSlice(nodes[1], 2, 2)), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := waitAllBound(t, ns, 4)
	seen := map[string]string{}
	for _, p := range pods {
		c, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, claimOf(p), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a := c.Status.Allocation
		if a == nil || len(a.Devices.Results) != 1 {
			t.Errorf("claim %s of %s: allocation %+v, want one GPU", c.Name, p.Name, a)
			continue
		}
		r := a.Devices.Results[0]
		if r.Pool != p.Spec.NodeName || r.Driver != exampleGPUDriver {
			t.Errorf("claim %s of %s (on %s) has %s/%s/%s", c.Name, p.Name, p.Spec.NodeName, r.Driver, r.Pool, r.Device)
		}
		dev := r.Pool + "/" + r.Device
		if other, ok := seen[dev]; ok {
			t.Errorf("%s allocated to both %s and %s", dev, other, p.Name)
		}
		seen[dev] = p.Name
		if len(c.Status.ReservedFor) != 1 || c.Status.ReservedFor[0].UID != p.UID {
			t.Errorf("claim %s reserved for %+v, want %s", c.Name, c.Status.ReservedFor, p.Name)
		}
	}
}

// startDRADriver sets up what a GPU driver and Kubernetes provide for
// the examples: the example DeviceClass, the single-gpu claim template in
// ns, a ResourceSlice of gpus[node] GPUs per node, and
// kube-controller-manager's resourceclaim controller, which makes the
// claims of pods from templates and frees them when the pods are gone.
// Everything goes when the test ends.
func startDRADriver(t *testing.T, ns string, gpus map[string]int) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	ctx := t.Context()
	class := readExample[resourcev1.DeviceClass](t, draClassFile)
	if _, err := cs.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	template := readExample[resourcev1.ResourceClaimTemplate](t, draTemplateFile)
	template.Namespace = ns
	if _, err := cs.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, template, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for node, n := range gpus {
		if _, err := cs.ResourceV1().ResourceSlices().Create(ctx, gpuSlice(node, n, 1), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for node := range gpus {
			_ = cs.ResourceV1().ResourceSlices().Delete(context.Background(), node+"-gpus", metav1.DeleteOptions{})
		}
		_ = cs.ResourceV1().DeviceClasses().Delete(context.Background(), class.Name, metav1.DeleteOptions{})
	})
	kcm, err := controlplane.StartKubeControllerManager(ctx, fw.Cluster.APIServer, controlplane.KubeControllerManagerOptions{
		BinDir: fw.BinDir, Dir: filepath.Join(fw.Dir, "kcm-"+ns), Controllers: []string{"resourceclaim-controller"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := kcm.Stop(); err != nil {
			t.Error(err)
		}
	})
}

// claimOf names the pod's claim "gpu" as the resourceclaim controller
// made it; "" until it has.
func claimOf(p corev1.Pod) string {
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.Name == "gpu" && s.ResourceClaimName != nil {
			return *s.ResourceClaimName
		}
	}
	return ""
}

// withVersion gives the slice the resource version of the stored one.
func withVersion(t *testing.T, cs kubernetes.Interface, s *resourcev1.ResourceSlice) *resourcev1.ResourceSlice {
	t.Helper()
	cur, err := cs.ResourceV1().ResourceSlices().Get(t.Context(), s.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.ResourceVersion = cur.ResourceVersion
	return s
}

// draPreemptConfig is the preempt configuration with claims allocated.
var draPreemptConfig = strings.Replace(preemptConfig, "  - name: predicates\n",
	"  - name: predicates\n    args:\n      dynamicResourceAllocation: true\n", 1)

// TestDRAPreemption: two low-priority pods hold the node's two GPUs
// through their claims, with CPU to spare. A high-priority pod asking for
// one GPU evicts the younger low-priority pod, exactly one, because its
// claim's GPU is what the preemptor needs; once the resourceclaim
// controller has freed that claim, the preemptor is bound and allocated
// the GPU the victim held.
func TestDRAPreemption(t *testing.T) {
	if !strings.Contains(draPreemptConfig, "dynamicResourceAllocation: true") {
		t.Fatal("the configuration does not turn on dynamic resource allocation")
	}
	const ns = "dra-preempt"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	labelledNodes(t, ns, 1, "8")
	node := ns + "-0"
	startDRADriver(t, ns, map[string]int{node: 2})
	for name, value := range map[string]int32{"dra-low": 10, "dra-high": 1000} {
		pc := &schedv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if err := fw.Client.Create(t.Context(), pc); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	explained := fw.StartSchedulerExplained(t, draPreemptConfig)
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	create := func(name, class string) {
		t.Helper()
		spec := podSpec(ns, "1")
		spec.PriorityClassName = class
		spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: new("single-gpu")}}
		spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
		createPod(t, ns, name, map[string]string{schedulingv1beta1.QueueNameAnnotation: "default"}, spec)
	}
	get := func(name string) (corev1.Pod, error) { return getPod(t, ns, name) }
	running := func(name string) func() (bool, string) { return podRunning(t, ns, name) }
	create("low-old", "dra-low")
	create("low-young", "dra-low")
	poll.Eventually(t, t.Context(), 60*time.Second, "low-old running", running("low-old"))
	poll.Eventually(t, t.Context(), 60*time.Second, "low-young running", running("low-young"))
	started := time.Now().Add(-time.Hour)
	setStartTime(t, ns, "low-old", started)
	setStartTime(t, ns, "low-young", started.Add(time.Minute))
	young, err := get("low-young")
	if err != nil {
		t.Fatal(err)
	}
	youngClaim, err := cs.ResourceV1().ResourceClaims(ns).Get(t.Context(), claimOf(young), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if youngClaim.Status.Allocation == nil {
		t.Fatalf("low-young runs with claim %s unallocated", youngClaim.Name)
	}
	youngGPU := youngClaim.Status.Allocation.Devices.Results[0].Device

	create("high", "dra-high")
	poll.Eventually(t, t.Context(), 90*time.Second, "high running in the victim's place", func() (bool, string) {
		ok, msg := running("high")()
		var evs corev1.EventList
		_ = fw.Client.List(t.Context(), &evs, client.InNamespace(ns))
		var seen []string
		for _, e := range evs.Items {
			seen = append(seen, e.Reason+"/"+e.InvolvedObject.Name+": "+e.Message)
		}
		xs, _ := explained.List(t.Context())
		for _, x := range xs {
			seen = append(seen, fmt.Sprintf("%+v", x))
		}
		return ok, msg + fmt.Sprint(seen)
	})
	if _, err := get("low-young"); !apierrors.IsNotFound(err) {
		t.Errorf("low-young: %v, want evicted", err)
	}
	if p, err := get("low-old"); err != nil || p.Spec.NodeName != node {
		t.Errorf("low-old: %v on %q, want it kept on %s", err, p.Spec.NodeName, node)
	}
	high, err := get("high")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cs.ResourceV1().ResourceClaims(ns).Get(t.Context(), claimOf(high), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Status.Allocation; a == nil || len(a.Devices.Results) != 1 || a.Devices.Results[0].Device != youngGPU {
		t.Errorf("high's claim %s allocated %+v, want the victim's %s", c.Name, a, youngGPU)
	}
}
