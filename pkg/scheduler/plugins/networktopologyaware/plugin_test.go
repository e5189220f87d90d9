package networktopologyaware

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	tt "github.com/caldera-sh/caldera/apis/topology/v1alpha1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/enqueue"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/preempt"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/priority"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

type recorder struct{ binds map[string]string }

func (r *recorder) Bind(t *api.TaskInfo, node string) { r.binds[t.Name] = node }

// cluster is two spines of two leaves of two 4-CPU nodes:
//
//	s-a: l-a1 (n0, n1), l-a2 (n2, n3)
//	s-b: l-b1 (n4, n5), l-b2 (n6, n7)
func cluster() ([]*corev1.Node, []*topologyv1alpha1.HyperNode) {
	var nodes []*corev1.Node
	for i := range 8 {
		nodes = append(nodes, st.MakeNode(fmt.Sprintf("n%d", i)).Alloc("cpu", "4").Obj())
	}
	leaf := func(name string, a, b int) *topologyv1alpha1.HyperNode {
		return tt.MakeHyperNode(name, 1).TierName("leaf").ExactNode(fmt.Sprintf("n%d", a)).ExactNode(fmt.Sprintf("n%d", b)).Obj()
	}
	hns := []*topologyv1alpha1.HyperNode{
		leaf("l-a1", 0, 1), leaf("l-a2", 2, 3), leaf("l-b1", 4, 5), leaf("l-b2", 6, 7),
		tt.MakeHyperNode("s-a", 2).TierName("spine").ExactHyperNode("l-a1").ExactHyperNode("l-a2").Obj(),
		tt.MakeHyperNode("s-b", 2).TierName("spine").ExactHyperNode("l-b1").ExactHyperNode("l-b2").Obj(),
	}
	return nodes, hns
}

// gangOf is an admitted PodGroup of n 2-CPU pods, all needed at once.
func gangOf(name string, n int, nt *schedulingv1beta1.NetworkTopologySpec) (*schedulingv1beta1.PodGroup, []*corev1.Pod) {
	pg := schedtesting.MakePodGroup(name, "ns").MinMember(int32(n)).Phase(schedulingv1beta1.PodGroupInqueue).Obj()
	pg.Spec.NetworkTopology = nt
	var pods []*corev1.Pod
	for i := range n {
		pods = append(pods, st.MakePod("ns", fmt.Sprintf("%s-%d", name, i)).Group(name).Req("cpu", "2").Obj())
	}
	return pg, pods
}

func hard(tier int32) *schedulingv1beta1.NetworkTopologySpec {
	return &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: &tier}
}

func run(t *testing.T, o api.Objects) (*recorder, *framework.Session) {
	t.Helper()
	o.Queues = append(o.Queues, schedtesting.MakeQueue("default").Obj())
	var plugins []framework.TierPlugin
	for _, f := range []framework.PluginFactory{priority.New, gang.New, New} {
		p, err := f(nil, &framework.Handle{})
		if err != nil {
			t.Fatal(err)
		}
		plugins = append(plugins, framework.TierPlugin{Plugin: p})
	}
	r := &recorder{binds: map[string]string{}}
	ssn := framework.OpenSession(t.Context(), api.Build(o), []framework.Tier{{Plugins: plugins}}, framework.Options{Sink: r})
	enqueue.New().Execute(ssn)
	allocate.New().Execute(ssn)
	ssn.Close()
	return r, ssn
}

// leafOf names the leaves the binds landed in.
func leavesOf(binds map[string]string) []string {
	leaf := map[string]string{"n0": "l-a1", "n1": "l-a1", "n2": "l-a2", "n3": "l-a2", "n4": "l-b1", "n5": "l-b1", "n6": "l-b2", "n7": "l-b2"}
	var out []string
	for _, n := range binds {
		out = append(out, leaf[n])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func spinesOf(binds map[string]string) []string {
	var out []string
	for _, l := range leavesOf(binds) {
		out = append(out, "s-"+l[2:3])
	}
	return slices.Compact(out)
}

func reason(ssn *framework.Session, job string) string {
	if r := ssn.Outcome(api.JobID("ns/" + job)).Unschedulable(); r != nil {
		return r.String()
	}
	return ""
}

func TestHardTierPlacement(t *testing.T) {
	nodes, hns := cluster()
	busy := st.MakePod("other", "busy").Req("cpu", "2").Node("n6").Phase(corev1.PodRunning).Obj()

	t.Run("a gang that fits a leaf lands in one, the fullest that holds it", func(t *testing.T) {
		pg, pods := gangOf("g", 3, hard(1))
		r, _ := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: append(pods, busy)})
		if len(r.binds) != 3 {
			t.Fatalf("bound %v, want all 3", r.binds)
		}
		if diff := cmp.Diff([]string{"l-b2"}, leavesOf(r.binds)); diff != "" {
			t.Errorf("leaves (-want,+got):\n%s", diff)
		}
	})
	t.Run("a gang larger than any leaf waits with a topology reason", func(t *testing.T) {
		pg, pods := gangOf("g", 5, hard(1))
		r, ssn := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: pods})
		if len(r.binds) != 0 {
			t.Errorf("bound %v, want nothing", r.binds)
		}
		if got := reason(ssn, "g"); !strings.HasPrefix(got, "TopologyConstraint: none of the 4 HyperNodes of tier 1 or below has cpu 10") {
			t.Errorf("reason %q", got)
		}
	})
	t.Run("tier 2 lets the same gang span one spine", func(t *testing.T) {
		pg, pods := gangOf("g", 5, hard(2))
		r, _ := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: pods})
		if len(r.binds) != 5 || len(spinesOf(r.binds)) != 1 {
			t.Errorf("bound %v (spines %v), want 5 pods under one spine", r.binds, spinesOf(r.binds))
		}
	})
	t.Run("a tier named", func(t *testing.T) {
		pg, pods := gangOf("g", 5, &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierName: "spine"})
		r, _ := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: pods})
		if len(r.binds) != 5 || len(spinesOf(r.binds)) != 1 {
			t.Errorf("bound %v, want 5 pods under one spine", r.binds)
		}
	})
	t.Run("an unknown tier name", func(t *testing.T) {
		pg, pods := gangOf("g", 2, &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierName: "rack"})
		r, ssn := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: pods})
		want := `TopologyConstraint: highestTierName "rack" names no tier of the network topology (tiers: leaf, spine)`
		if len(r.binds) != 0 || reason(ssn, "g") != want {
			t.Errorf("bound %v, reason %q; want nothing and %q", r.binds, reason(ssn, "g"), want)
		}
	})
	t.Run("without HyperNodes a hard gang waits", func(t *testing.T) {
		pg, pods := gangOf("g", 2, hard(1))
		r, ssn := run(t, api.Objects{Nodes: nodes, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: pods})
		if len(r.binds) != 0 || !strings.Contains(reason(ssn, "g"), "no HyperNodes") {
			t.Errorf("bound %v, reason %q", r.binds, reason(ssn, "g"))
		}
	})
	t.Run("a soft gang that fits no leaf is placed anyway", func(t *testing.T) {
		tier := int32(1)
		pg, pods := gangOf("g", 5, &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.SoftNetworkTopologyMode, HighestTierAllowed: &tier})
		r, _ := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: pods})
		if len(r.binds) != 5 {
			t.Errorf("bound %v, want all 5", r.binds)
		}
	})
	t.Run("a soft gang that fits a leaf keeps to it", func(t *testing.T) {
		tier := int32(1)
		pg, pods := gangOf("g", 4, &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.SoftNetworkTopologyMode, HighestTierAllowed: &tier})
		r, _ := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: pods})
		if len(r.binds) != 4 || len(leavesOf(r.binds)) != 1 {
			t.Errorf("bound %v (leaves %v), want 4 pods in one leaf", r.binds, leavesOf(r.binds))
		}
	})
	t.Run("a job that already runs stays in its leaf", func(t *testing.T) {
		pg, pods := gangOf("g", 1, hard(1))
		pods[0].Spec.NodeName, pods[0].Status.Phase = "n4", corev1.PodRunning
		for i := 1; i < 4; i++ {
			pods = append(pods, st.MakePod("ns", fmt.Sprintf("g-%d", i)).Group("g").Req("cpu", "2").Obj())
		}
		r, _ := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: pods})
		if len(r.binds) != 3 {
			t.Fatalf("bound %v, want the 3 new pods", r.binds)
		}
		if diff := cmp.Diff([]string{"l-b1"}, leavesOf(r.binds)); diff != "" {
			t.Errorf("leaves (-want,+got):\n%s", diff)
		}
	})
	t.Run("highestTierAllowed 0 keeps the job on one node", func(t *testing.T) {
		pg, pods := gangOf("g", 2, hard(0))
		r, _ := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: pods})
		if len(r.binds) != 2 || r.binds["g-0"] != r.binds["g-1"] {
			t.Errorf("bound %v, want both pods on one node", r.binds)
		}
	})
}

func TestPodsWithoutConstraintFillUsedHyperNodes(t *testing.T) {
	nodes, hns := cluster()
	busy := st.MakePod("other", "busy").Req("cpu", "2").Node("n6").Phase(corev1.PodRunning).Obj()
	pod := st.MakePod("ns", "free").Req("cpu", "1").Obj()
	r, _ := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, Pods: []*corev1.Pod{busy, pod}})
	if got := r.binds["free"]; got != "n6" && got != "n7" {
		t.Errorf("free bound to %q, want a node under l-b2, the only HyperNode in use", got)
	}
}

type evictions struct {
	recorder
	evicted   []string
	nominated map[string]string
}

func (e *evictions) Evict(t *api.TaskInfo, _ string)    { e.evicted = append(e.evicted, t.Name) }
func (e *evictions) Nominate(t *api.TaskInfo, n string) { e.nominated[t.Name] = n }
func (e *evictions) Unnominate(*api.TaskInfo)           {}

// fullCluster is two low-priority 2-CPU pods on each node; the most
// recently started, the first victims, are on n0 and n4, in different
// spines.
func fullCluster() []*corev1.Pod {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var pods []*corev1.Pod
	for i := range 8 {
		age := time.Duration(i) * time.Hour
		if i == 0 || i == 4 {
			age = 10 * time.Hour
		}
		for k := range 2 {
			pods = append(pods, st.MakePod("ns", fmt.Sprintf("low-%d-%d", i, k)).Req("cpu", "2").Priority(1).
				Created(metav1.NewTime(epoch.Add(age))).Node(fmt.Sprintf("n%d", i)).Phase(corev1.PodRunning).Obj())
		}
	}
	return pods
}

// runPreempt runs preempt with priority, gang and the plugin.
func runPreempt(t *testing.T, o api.Objects) *evictions {
	t.Helper()
	o.Queues = append(o.Queues, schedtesting.MakeQueue("default").Obj())
	var plugins []framework.TierPlugin
	for _, f := range []framework.PluginFactory{priority.New, gang.New, New} {
		p, err := f(nil, &framework.Handle{})
		if err != nil {
			t.Fatal(err)
		}
		plugins = append(plugins, framework.TierPlugin{Plugin: p})
	}
	r := &evictions{recorder: recorder{binds: map[string]string{}}, nominated: map[string]string{}}
	ssn := framework.OpenSession(t.Context(), api.Build(o), []framework.Tier{{Plugins: plugins}}, framework.Options{Sink: r, Evictor: r, Nominator: r})
	preempt.New(nil).Execute(ssn)
	ssn.Close()
	return r
}

// TestPreemptionStaysInOneHyperNode: a high-priority hard tier-1 gang on a
// full cluster evicts low-priority pods of one leaf only, and waits there.
func TestPreemptionStaysInOneHyperNode(t *testing.T) {
	nodes, hns := cluster()
	// The most recently started victims, the first choice, are on n0 and
	// n4, in different spines: the gang must still keep to one leaf.
	pods := fullCluster()
	pg, gangPods := gangOf("g", 4, hard(1))
	for _, p := range gangPods {
		p.Spec.Priority = new(int32(100))
	}
	r := runPreempt(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: append(pods, gangPods...)})
	if len(r.evicted) != 4 || len(r.nominated) != 4 {
		t.Fatalf("evicted %v, nominated %v; want 4 of each", r.evicted, r.nominated)
	}
	if leaves := leavesOf(r.nominated); len(leaves) != 1 {
		t.Errorf("nominated into leaves %v, want one", leaves)
	}
	victimNodes := map[string]string{}
	for _, v := range r.evicted {
		victimNodes[v] = "n" + strings.Split(v, "-")[1]
	}
	if diff := cmp.Diff(leavesOf(r.nominated), leavesOf(victimNodes)); diff != "" {
		t.Errorf("victims' leaves differ from the gang's (-gang,+victims):\n%s", diff)
	}
}

// subGrouped is gangOf with the pods labelled part=i/size, split into
// sub-groups of size pods by that label, each constrained by sub.
func subGrouped(name string, n, size int, minMember, minSubGroups int32, job, sub *schedulingv1beta1.NetworkTopologySpec) (*schedulingv1beta1.PodGroup, []*corev1.Pod) {
	pg, pods := gangOf(name, n, job)
	pg.Spec.MinMember = minMember
	s := int32(size)
	pg.Spec.SubGroupPolicy = []schedulingv1beta1.SubGroupPolicySpec{{
		Name: "part", NetworkTopology: sub, SubGroupSize: &s, MinSubGroups: &minSubGroups,
		MatchLabelKeys: []string{"part"},
	}}
	for i, p := range pods {
		p.Labels = map[string]string{"part": fmt.Sprint(i / size)}
	}
	return pg, pods
}

func TestSubGroups(t *testing.T) {
	nodes, hns := cluster()
	leafOf := map[string]string{"n0": "l-a1", "n1": "l-a1", "n2": "l-a2", "n3": "l-a2", "n4": "l-b1", "n5": "l-b1", "n6": "l-b2", "n7": "l-b2"}
	busy := func(node string) *corev1.Pod {
		return st.MakePod("other", "busy-"+node).Req("cpu", "2").Node(node).Phase(corev1.PodRunning).Obj()
	}

	t.Run("each sub-group within one leaf, the job within one spine", func(t *testing.T) {
		// l-a1 has room for 3 pods: placed flat, pods 0-2 would go there
		// and split the second pair across leaves.
		pg, pods := subGrouped("g", 6, 2, 6, 3, hard(2), hard(1))
		r, _ := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: append(pods, busy("n0"))})
		if len(r.binds) != 6 {
			t.Fatalf("bound %v, want all 6", r.binds)
		}
		for i := 0; i < 6; i += 2 {
			a, b := fmt.Sprintf("g-%d", i), fmt.Sprintf("g-%d", i+1)
			if leafOf[r.binds[a]] != leafOf[r.binds[b]] {
				t.Errorf("%s in %s and %s in %s: a sub-group across leaves", a, leafOf[r.binds[a]], b, leafOf[r.binds[b]])
			}
		}
		if diff := cmp.Diff([]string{"s-a"}, spinesOf(r.binds)); diff != "" {
			t.Errorf("spines (-want,+got):\n%s", diff)
		}
	})
	// Only l-b2 has room for 4 pods.
	others := []*corev1.Pod{busy("n0"), busy("n2"), busy("n4")}
	t.Run("minSubGroups 1: one whole sub-group starts, the other waits", func(t *testing.T) {
		pg, pods := subGrouped("g", 8, 4, 4, 1, nil, hard(1))
		r, ssn := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: append(pods, others...)})
		if len(r.binds) != 4 || len(leavesOf(r.binds)) != 1 || leavesOf(r.binds)[0] != "l-b2" {
			t.Fatalf("bound %v, want one sub-group of 4 in l-b2", r.binds)
		}
		if got := reason(ssn, "g"); !strings.Contains(got, "sub-group part/1") {
			t.Errorf("reason %q, want the waiting sub-group named", got)
		}
	})
	t.Run("minSubGroups 2: nothing starts", func(t *testing.T) {
		pg, pods := subGrouped("g", 8, 4, 8, 2, nil, hard(1))
		r, ssn := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: append(pods, others...)})
		if len(r.binds) != 0 {
			t.Errorf("bound %v, want nothing", r.binds)
		}
		want := "TopologyConstraint: 4 of 8 tasks placeable, 8 needed together (minAvailable); none of the 4 HyperNodes of tier 1 or below has cpu 8, pods 4 free for sub-group part/1"
		if got := reason(ssn, "g"); got != want {
			t.Errorf("reason %q, want %q", got, want)
		}
	})
	t.Run("a soft sub-group spills over leaves", func(t *testing.T) {
		tier := int32(1)
		pg, pods := subGrouped("g", 8, 4, 8, 2, nil, &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.SoftNetworkTopologyMode, HighestTierAllowed: &tier})
		r, _ := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: append(pods, others...)})
		if len(r.binds) != 8 {
			t.Errorf("bound %v, want all 8", r.binds)
		}
	})
	t.Run("a sub-group short of its size makes the job invalid", func(t *testing.T) {
		pg, pods := subGrouped("g", 6, 4, 6, 2, nil, hard(1))
		r, ssn := run(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: pods})
		if len(r.binds) != 0 || !strings.Contains(reason(ssn, "g"), "sub-group policy part has 1 whole sub-groups of pods that can run, fewer than its minSubGroups 2") {
			t.Errorf("bound %v, reason %q", r.binds, reason(ssn, "g"))
		}
	})
}

// TestPreemptionKeepsSubGroupsInOneHyperNode: on a full cluster whose
// first-choice victims are in different leaves (n0 and n4), a high-priority job of
// two hard tier-1 sub-groups makes room for each sub-group within one
// leaf.
func TestPreemptionKeepsSubGroupsInOneHyperNode(t *testing.T) {
	nodes, hns := cluster()
	pods := fullCluster()
	// Each pod takes a whole node, so each sub-group two nodes.
	pg, gangPods := subGrouped("g", 4, 2, 4, 2, nil, hard(1))
	for _, p := range gangPods {
		p.Spec.Priority = new(int32(100))
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("4")
	}
	r := runPreempt(t, api.Objects{Nodes: nodes, HyperNodes: hns, PodGroups: []*schedulingv1beta1.PodGroup{pg}, Pods: append(pods, gangPods...)})
	if len(r.evicted) != 8 || len(r.nominated) != 4 {
		t.Fatalf("evicted %v, nominated %v; want 8 and 4", r.evicted, r.nominated)
	}
	for _, pair := range [][2]string{{"g-0", "g-1"}, {"g-2", "g-3"}} {
		if l := leavesOf(map[string]string{"a": r.nominated[pair[0]], "b": r.nominated[pair[1]]}); len(l) != 1 {
			t.Errorf("%s and %s nominated into leaves %v, want one", pair[0], pair[1], l)
		}
	}
}
