package numaaware

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework/frameworktest"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/priority"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// report is a node's Numatopology: numaNodes NUMA nodes of perNUMA CPUs
// each (one socket per NUMA node, two hyperthreads per core), free CPUs
// free ("" for all), the kubelet's policies.
func report(node string, numaNodes, perNUMA int, free string, cpuManager, topologyPolicy string, allocations ...nodeinfov1alpha1.PodAllocation) *nodeinfov1alpha1.Numatopology {
	detail := map[string]nodeinfov1alpha1.CPUInfo{}
	for id := range numaNodes * perNUMA {
		detail[fmt.Sprint(id)] = nodeinfov1alpha1.CPUInfo{NUMANodeID: id / perNUMA, SocketID: id / perNUMA, CoreID: id / 2}
	}
	if free == "" {
		free = fmt.Sprintf("0-%d", numaNodes*perNUMA-1)
	}
	return &nodeinfov1alpha1.Numatopology{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: nodeinfov1alpha1.NumatopoSpec{
		Policies: map[nodeinfov1alpha1.PolicyName]string{
			nodeinfov1alpha1.CPUManagerPolicy: cpuManager, nodeinfov1alpha1.TopologyManagerPolicy: topologyPolicy},
		NumaResMap:     map[string]nodeinfov1alpha1.ResourceInfo{"cpu": {Allocatable: free, Capacity: numaNodes * perNUMA}},
		CPUDetail:      detail,
		PodAllocations: allocations,
	}}
}

func node(name string, cpus int) *corev1.Node {
	return st.MakeNode(name).Alloc("cpu", fmt.Sprint(cpus), "memory", "256Gi").Obj()
}

// pinned is a Guaranteed pod of the gang group asking for cpus whole CPUs
// under policy ("" for none).
func pinned(name, group string, cpus int, policy string) *corev1.Pod {
	w := st.MakePod("ns", name).Group(group).Req("cpu", fmt.Sprint(cpus), "memory", "1Gi").Limit("cpu", fmt.Sprint(cpus), "memory", "1Gi")
	if policy != "" {
		w = w.Annotation(schedulingv1beta1.NumaPolicyKey, policy)
	}
	p := w.Obj()
	p.UID = types.UID("uid-" + name)
	return p
}

func inqueue(name string, min int32) *schedulingv1beta1.PodGroup {
	return schedtesting.MakePodGroup(name, "ns").MinMember(min).Queue("default").Phase(schedulingv1beta1.PodGroupInqueue).Obj()
}

func tiers(t *testing.T) []framework.Tier {
	return []framework.Tier{frameworktest.Tier(t, nil, priority.New, gang.New, New)}
}

// place runs one allocate cycle and returns the binds and each job's
// reason for waiting.
func place(t *testing.T, o api.Objects) ([]string, map[api.JobID]string) {
	t.Helper()
	o.Queues = append(o.Queues, schedtesting.MakeQueue("default").Obj())
	ssn, rec := frameworktest.Open(t, api.Build(o), tiers(t), framework.Options{})
	allocate.New().Execute(ssn)
	reasons := map[api.JobID]string{}
	for id, out := range ssn.Outcomes() {
		if u := out.Unschedulable(); u != nil {
			reasons[id] = u.String()
		}
	}
	binds := slices.Clone(rec.Binds)
	slices.Sort(binds)
	return binds, reasons
}

func TestPlacement(t *testing.T) {
	single, restricted := string(configSingle), "restricted"
	for _, tc := range []struct {
		name       string
		objects    api.Objects
		wantBinds  []string
		wantReason map[api.JobID]string
	}{
		{
			name: "a single-numa-node pod goes where one NUMA node has room",
			objects: api.Objects{
				Nodes: []*corev1.Node{node("split", 16), node("whole", 16)},
				Numatopologies: []*nodeinfov1alpha1.Numatopology{
					report("split", 2, 8, "4-11", "static", single),
					report("whole", 2, 8, "0-7", "static", single),
				},
				Pods:      []*corev1.Pod{pinned("p", "p", 6, single)},
				PodGroups: []*schedulingv1beta1.PodGroup{inqueue("p", 1)},
			},
			wantBinds: []string{"p@whole"},
		},
		{
			name: "no node with the pod's policy",
			objects: api.Objects{
				Nodes:          []*corev1.Node{node("n1", 16), node("bare", 16)},
				Numatopologies: []*nodeinfov1alpha1.Numatopology{report("n1", 2, 8, "", "static", restricted)},
				Pods:           []*corev1.Pod{pinned("p", "p", 2, single)},
				PodGroups:      []*schedulingv1beta1.PodGroup{inqueue("p", 1)},
			},
			wantReason: map[api.JobID]string{"ns/p": `NotEnoughResources: 0 of 1 tasks placeable, 1 needed together (minAvailable); task p: 0/2 nodes are available: 1 node has topology manager policy "restricted", not the pod's "single-numa-node", 1 node reports no NUMA topology (Numatopology)`},
		},
		{
			name: "a gang's pods take NUMA nodes in turn within the cycle",
			objects: api.Objects{
				Nodes:          []*corev1.Node{node("n1", 16)},
				Numatopologies: []*nodeinfov1alpha1.Numatopology{report("n1", 2, 8, "", "static", single)},
				Pods:           []*corev1.Pod{pinned("g-0", "g", 6, single), pinned("g-1", "g", 6, single), pinned("g-2", "g", 3, single)},
				PodGroups:      []*schedulingv1beta1.PodGroup{inqueue("g", 3)},
			},
			wantReason: map[api.JobID]string{"ns/g": "NotEnoughResources: 2 of 3 tasks placeable, 3 needed together (minAvailable); task g-2: 0/1 nodes are available: 1 node has no single-numa-node placement for container 0's 3 CPUs"},
		},
		{
			name: "pods bound but not yet reported hold CPUs",
			objects: api.Objects{
				Nodes:          []*corev1.Node{node("n1", 32)},
				Numatopologies: []*nodeinfov1alpha1.Numatopology{report("n1", 2, 8, "", "static", single)},
				Pods: []*corev1.Pod{
					bound(pinned("old-0", "old", 8, ""), "n1"), bound(pinned("old-1", "old", 8, ""), "n1"),
					pinned("p", "p", 2, single),
				},
				PodGroups: []*schedulingv1beta1.PodGroup{inqueue("old", 2), inqueue("p", 1)},
			},
			wantReason: map[api.JobID]string{"ns/p": "NotEnoughResources: 0 of 1 tasks placeable, 1 needed together (minAvailable); task p: 0/1 nodes are available: 1 node has 0 free CPUs for container 0's 2"},
		},
		{
			name: "pods the node reports hold the CPUs it says",
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", 32)},
				Numatopologies: []*nodeinfov1alpha1.Numatopology{report("n1", 2, 8, "8-15", "static", single,
					nodeinfov1alpha1.PodAllocation{UID: "uid-old-0", ContainerAllocations: []nodeinfov1alpha1.ContainerAllocation{{Name: "c", Allocations: map[string]string{"cpu": "0-7"}}}})},
				Pods:      []*corev1.Pod{bound(pinned("old-0", "old", 8, ""), "n1"), pinned("p", "p", 8, single)},
				PodGroups: []*schedulingv1beta1.PodGroup{inqueue("old", 1), inqueue("p", 1)},
			},
			wantBinds: []string{"p@n1"},
		},
		{
			name: "pods that are not Guaranteed are not held to NUMA nodes",
			objects: api.Objects{
				Nodes:          []*corev1.Node{node("n1", 16)},
				Numatopologies: []*nodeinfov1alpha1.Numatopology{report("n1", 2, 8, "", "static", single)},
				Pods:           []*corev1.Pod{st.MakePod("ns", "burst").Group("b").Req("cpu", "12").Annotation(schedulingv1beta1.NumaPolicyKey, single).Obj()},
				PodGroups:      []*schedulingv1beta1.PodGroup{inqueue("b", 1)},
			},
			wantBinds: []string{"burst@n1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			binds, reasons := place(t, tc.objects)
			if diff := cmp.Diff(tc.wantBinds, binds, cmpEmptyStrings); diff != "" {
				t.Errorf("binds (-want,+got):\n%s", diff)
			}
			for id, want := range tc.wantReason {
				if got := reasons[id]; got != want {
					t.Errorf("%s waits for %q, want %q", id, got, want)
				}
			}
		})
	}
}

const configSingle = "single-numa-node"

var cmpEmptyStrings = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func bound(p *corev1.Pod, node string) *corev1.Pod {
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	return p
}

// TestScoreAndVictims: nodes where the pod spans fewer NUMA nodes score
// higher; a victim's CPUs count as free.
func TestScoreAndVictims(t *testing.T) {
	o := api.Objects{
		Nodes: []*corev1.Node{node("narrow", 16), node("wide", 16)},
		Numatopologies: []*nodeinfov1alpha1.Numatopology{
			report("narrow", 4, 4, "", "static", "restricted"),
			report("wide", 2, 8, "", "static", "restricted"),
		},
		Pods:      []*corev1.Pod{pinned("p", "p", 6, "restricted"), bound(pinned("v", "v", 8, ""), "wide")},
		PodGroups: []*schedulingv1beta1.PodGroup{inqueue("p", 1), inqueue("v", 1)},
		Queues:    []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()},
	}
	snap := api.Build(o)
	plugin, err := New(&configv1alpha1.NUMAAwareArgs{Weight: new(int32(1))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl := plugin.(*Plugin)
	frameworktest.Open(t, snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: pl}}}}, framework.Options{})
	task := func(job, name string) *api.TaskInfo {
		for _, tk := range snap.Jobs[api.NewJobID("ns", job)].Tasks {
			if tk.Name == name {
				return tk
			}
		}
		t.Fatalf("no task %s", name)
		return nil
	}
	p, v := task("p", "p"), task("v", "v")
	nodes := []*api.NodeInfo{snap.Nodes["narrow"], snap.Nodes["wide"]}
	scores := make([]float64, 2)
	pl.ScoreNodes(p, nodes, scores)
	// 6 CPUs span two 4-CPU NUMA nodes on narrow; on wide the unreported
	// victim holds NUMA node 0 and NUMA node 1 holds 6: one.
	if want := []float64{0, 50}; !slices.Equal(scores, want) {
		t.Errorf("scores %v, want %v", scores, want)
	}
	// Fill wide's second NUMA node too: only evicting v makes room.
	if s := pl.Reserve(task("p", "p"), snap.Nodes["wide"]); s != nil {
		t.Fatalf("reserve: %v", s)
	}
	again := pinned("q", "p", 8, "restricted")
	q := &api.TaskInfo{UID: "q", Name: "q", Namespace: "ns", Pod: again}
	if s := pl.Predicate(q, snap.Nodes["wide"]); s == nil || s.Code != framework.Unschedulable {
		t.Errorf("8 more CPUs on a full node: %v, want Unschedulable", s)
	}
	if s := pl.PredicateWithout(q, snap.Nodes["wide"], []*api.TaskInfo{v}); s != nil {
		t.Errorf("8 CPUs with the 8-CPU victim gone: %v, want a fit", s)
	}
	pl.Unreserve(task("p", "p"), snap.Nodes["wide"])
	if s := pl.Predicate(q, snap.Nodes["wide"]); s != nil {
		t.Errorf("after unreserve: %v, want a fit", s)
	}
}
