package predicates

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit/evaluatortest"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
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
