package predicates

import (
	"context"
	"encoding/json"
	"fmt"
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

const benchDriver = "gpu.example.com"

// binds records where each task went.
type binds map[string]string

func (b binds) Bind(t *api.TaskInfo, node string) { b[t.Name] = node }

// BenchmarkPlaceDRA places single-pod jobs, each asking for one of the
// nodes' eight GPUs, on nodes that offer them: as a GPU count
// (nvidia.com/gpu, "plain") and as DRA devices of a ResourceSlice per node
// with one ResourceClaim per pod ("dra"). Both go through the predicates
// plugin (kube-scheduler's filters) and the allocate action, in one run;
// the target is dra at no less than 70% of plain's pods/s. Sizes: nodes of
// 8 devices and as many pods as devices, every device taken (100 nodes, and
// 1,000 nodes with 8,000 pods; run one iteration, -benchtime=1x: the DRA
// size of 1,000 nodes takes minutes, docs/performance.md).
func BenchmarkPlaceDRA(b *testing.B) {
	for _, nodes := range []int{100, 1000} {
		pods := nodes * 8
		for _, kind := range []string{"plain", "dra"} {
			b.Run(fmt.Sprintf("%s/%dnodes", kind, nodes), func(b *testing.B) { benchPlaceDRA(b, kind, nodes, pods) })
		}
	}
}

func benchPlaceDRA(b *testing.B, kind string, nodes, pods int) {
	o, objs := deviceCluster(kind, nodes, 8, pods)
	fit := evaluatortest.NewEvaluatorWith(b, podfit.Options{Profile: podfit.ProfileOptions{DynamicResources: kind == "dra"}}, objs...)
	if kind == "dra" {
		waitDevicesSeen(b, fit, o, objs)
	}
	g, err := gang.New(nil, &framework.Handle{})
	if err != nil {
		b.Fatal(err)
	}
	pl, err := New(nil, &framework.Handle{PodFit: fit})
	if err != nil {
		b.Fatal(err)
	}
	p := pl.(*Plugin)
	tiers := []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: g}, {Plugin: p}}}}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		snap := api.Build(o)
		rec := binds{}
		b.StartTimer()
		ssn := framework.OpenSession(b.Context(), snap, tiers, framework.Options{Now: time.Unix(0, 0), Sink: rec})
		allocate.New().Execute(ssn)
		ssn.Close()
		b.StopTimer()
		if len(rec) != pods {
			b.Fatalf("%d of %d pods placed", len(rec), pods)
		}
		// The claims' devices were reserved in flight: let them go for the
		// next round, as a bind or a discarded gang would.
		for _, j := range snap.Jobs {
			for _, t := range j.Tasks {
				p.Unreserve(context.Background(), t)
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(pods*b.N)/b.Elapsed().Seconds(), "pods/s")
}

// deviceCluster is nodes of devices GPUs each and pods single-pod jobs
// asking for one: as a GPU count ("plain"), or ("dra") as devices of a
// ResourceSlice per node and a claim per pod made from a template, with
// the DeviceClass; objs are what the evaluator's informers serve.
func deviceCluster(kind string, nodes, devices, pods int) (api.Objects, []runtime.Object) {
	o := api.Objects{Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}}
	var objs []runtime.Object
	if kind == "dra" {
		objs = append(objs, &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: benchDriver},
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: `device.driver == "` + benchDriver + `"`}}}}})
	}
	for i := range nodes {
		name := fmt.Sprintf("n%04d", i)
		if kind == "plain" {
			o.Nodes = append(o.Nodes, st.MakeNode(name).Alloc("cpu", "64", "memory", "256Gi", "nvidia.com/gpu", fmt.Sprint(devices), "pods", "110").Obj())
			continue
		}
		o.Nodes = append(o.Nodes, st.MakeNode(name).Alloc("cpu", "64", "memory", "256Gi", "pods", "110").Obj())
		s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceSliceSpec{
			Driver: benchDriver, Pool: resourcev1.ResourcePool{Name: name, ResourceSliceCount: 1}, NodeName: &name}}
		for d := range devices {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", d)})
		}
		objs = append(objs, s)
	}
	for i := range pods {
		name := fmt.Sprintf("p%05d", i)
		p := st.MakePod("ns", name).Group(name).Req("cpu", "1")
		if kind == "plain" {
			p.Limit("nvidia.com/gpu", "1")
		}
		pod := p.Obj()
		if kind == "dra" {
			// The claim kube-controller-manager makes from a template.
			pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: new("gpu")}}
			pod.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: &name}}
			objs = append(objs, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: pod.UID + "-claim",
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: new(true)}}},
				Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
					Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: benchDriver, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}}}}}})
		}
		o.Pods = append(o.Pods, pod)
		o.PodGroups = append(o.PodGroups, schedtesting.MakePodGroup(name, "ns").MinMember(1).Queue("default").Phase(schedulingv1beta1.PodGroupInqueue).Obj())
	}
	return o, objs
}

// waitDevicesSeen waits until the evaluator's DRA manager has every
// pod's claims, the first pod fits every node (each has devices), and
// every device object served (slices, the class; claims without an
// allocation take no device and are not counted) is counted in the
// signatures of pods with claims: the claim cache, the slice tracker and
// the events they count fill after the informers report synced.
func waitDevicesSeen(tb testing.TB, fit *podfit.Evaluator, o api.Objects, objs []runtime.Object) {
	tb.Helper()
	counted := 0
	for _, obj := range objs {
		if c, ok := obj.(*resourcev1.ResourceClaim); !ok || c.Status.Allocation != nil {
			counted++
		}
	}
	fit.SetNodes(api.Build(o).NodeList)
	poll.Eventually(tb, context.Background(), 30*time.Second, "the evaluator seeing every claim and device", func() (bool, string) {
		for _, p := range o.Pods {
			if _, st := fit.PreFilter(context.Background(), p, nil); st != nil {
				return false, p.Name + ": " + st.Message()
			}
		}
		if fits, _ := fit.Feasible(context.Background(), o.Pods[0]); len(fits) != len(o.Nodes) {
			return false, fmt.Sprintf("%s fits %v", o.Pods[0].Name, fits)
		}
		// A signed pod's claims fragment starts with the count of events
		// seen.
		if sig, ok := fit.Signature(context.Background(), o.Pods[0]); ok {
			var fragments map[string]any
			if err := json.Unmarshal([]byte(sig), &fragments); err != nil {
				return false, err.Error()
			}
			claims, _ := fragments["caldera.sh/resource-claims"].(string)
			if epoch, _, _ := strings.Cut(claims, "/"); epoch != fmt.Sprint(counted) {
				return false, fmt.Sprintf("%s events counted of %d", epoch, counted)
			}
		}
		return true, ""
	})
}
