package model

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	batchtesting "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	jobcore "github.com/caldera-sh/caldera/pkg/controllers/job/core"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

var now = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

func queue(name, parent string, weight int32, deserved, capability, allocated corev1.ResourceList) *schedulingv1beta1.Queue {
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}
	q.Spec.Parent, q.Spec.Weight, q.Spec.Deserved, q.Spec.Capability = parent, weight, deserved, capability
	q.Status.Allocated, q.Status.State = allocated, schedulingv1beta1.QueueStateOpen
	return q
}

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func TestQueues(t *testing.T) {
	in := Input{Now: now, Queues: []*schedulingv1beta1.Queue{
		queue("research", "", 2, rl("cpu", "8", "nvidia.com/gpu", "4"), nil, rl("cpu", "6", "nvidia.com/gpu", "4", "memory", "16Gi")),
		queue("root", "", 1, nil, nil, nil),
		queue("vision", "research", 1, nil, rl("cpu", "4"), rl("cpu", "1500m")),
		queue("default", "", 1, nil, nil, nil),
		queue("audio", "research", 1, rl("cpu", "0"), nil, rl("cpu", "1")),
		queue("orphan", "gone", 1, nil, nil, nil),
	}, Jobs: []*batchv1alpha1.Job{batchtesting.MakeJob("a", "ns").Queue("vision").Obj(), batchtesting.MakeJob("b", "ns").Obj()}}
	m := Build(in)
	var order []string
	for _, q := range m.Queues() {
		order = append(order, fmt.Sprintf("%s%s(%s)", strings.Repeat(" ", q.Depth), q.Name, q.Parent))
	}
	want := []string{"orphan()", "root()", " default(root)", " research(root)", "  audio(research)", "  vision(research)"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("tree order (-want +got):\n%s", diff)
	}
	byName := map[string]Queue{}
	for _, q := range m.Queues() {
		byName[q.Name] = q
	}
	wantRes := map[string][]QueueResource{
		"research": {
			{Resource: "cpu", Allocated: "6", Deserved: "8", Share: 0.75, ShareOf: ShareOfDeserved},
			{Resource: "memory", Allocated: "16Gi"},
			{Resource: "nvidia.com/gpu", Allocated: "4", Deserved: "4", Share: 1, ShareOf: ShareOfDeserved},
		},
		"vision": {{Resource: "cpu", Allocated: "1500m", Capability: "4", Share: 0.375, ShareOf: ShareOfCapability}},
		// Deserving none is a share of nothing, not a division by zero.
		"audio": {{Resource: "cpu", Allocated: "1", Deserved: "0", ShareOf: ShareOfDeserved}},
	}
	for name, want := range wantRes {
		if diff := cmp.Diff(want, byName[name].Resources); diff != "" {
			t.Errorf("queue %s resources (-want +got):\n%s", name, diff)
		}
	}
	if byName["vision"].Jobs != 1 || byName["default"].Jobs != 1 || byName["research"].Jobs != 0 {
		t.Errorf("jobs per queue: vision %d default %d research %d, want 1 1 0", byName["vision"].Jobs, byName["default"].Jobs, byName["research"].Jobs)
	}
}

func TestQueueCycleIsListed(t *testing.T) {
	m := Build(Input{Queues: []*schedulingv1beta1.Queue{queue("a", "b", 1, nil, nil, nil), queue("b", "a", 1, nil, nil, nil)}})
	if got := len(m.Queues()); got != 2 {
		t.Fatalf("%d queues listed of a cycle of 2", got)
	}
}

func podGroup(ns, name, queue string, phase schedulingv1beta1.PodGroupPhase, minMember int32) *schedulingv1beta1.PodGroup {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("pg-" + name)}}
	pg.Spec.Queue, pg.Spec.MinMember, pg.Status.Phase = queue, minMember, phase
	return pg
}

func jobWithUID(name string) *batchv1alpha1.Job {
	j := batchtesting.MakeJob(name, "ns").Queue("q").MinAvailable(2).Obj()
	j.UID = types.UID("uid-" + name)
	j.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour))
	return j
}

func TestJobs(t *testing.T) {
	train := jobWithUID("train")
	train.Status.State.Phase = batchv1alpha1.JobPending
	fresh := jobWithUID("fresh")
	fresh.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute))
	trainPG := podGroup("ns", jobcore.PodGroupName(train), "q", schedulingv1beta1.PodGroupInqueue, 2)
	trainPG.Status.Conditions = []schedulingv1beta1.PodGroupCondition{{Type: schedulingv1beta1.PodGroupUnschedulableType,
		Status: corev1.ConditionTrue, Reason: schedulingv1beta1.NotEnoughResourcesReason, Message: "2/2 tasks in gang unschedulable: 0/3 nodes are available, 3 Insufficient cpu"}}
	ray := podGroup("ns", "ray-raycluster-pg", "q", schedulingv1beta1.PodGroupRunning, 3)
	in := Input{Now: now, Jobs: []*batchv1alpha1.Job{train, fresh}, PodGroups: []*schedulingv1beta1.PodGroup{trainPG, ray},
		Pods: []*corev1.Pod{
			st.MakePod("ns", "train-worker-0").Group(trainPG.Name).Obj(),
			st.MakePod("ns", "train-worker-1").Group(trainPG.Name).Obj(),
			st.MakePod("ns", "ray-head").Group(ray.Name).Node("n1").Phase(corev1.PodRunning).Obj(),
			st.MakePod("ns", "ray-worker-0").Group(ray.Name).Node("n1").Phase(corev1.PodRunning).Obj(),
			st.MakePod("ns", "ray-worker-1").Group(ray.Name).Node("n2").Phase(corev1.PodSucceeded).Obj(),
			st.MakePod("ns", "loose").Obj(),
		}}
	m := Build(in)
	want := []Job{
		{Kind: KindJob, Namespace: "ns", Name: "fresh", Queue: "q", Phase: PhaseNotStarted, MinMember: 2, Created: fresh.CreationTimestamp.Time},
		{Kind: KindPodGroup, Namespace: "ns", Name: "ray-raycluster-pg", Queue: "q", Phase: "Running", PodGroup: "ray-raycluster-pg",
			PodGroupPhase: "Running", MinMember: 3, Pods: PodCounts{Running: 2, Succeeded: 1}},
		{Kind: KindJob, Namespace: "ns", Name: "train", Queue: "q", Phase: "Pending", PodGroup: trainPG.Name, PodGroupPhase: "Inqueue",
			MinMember: 2, Pods: PodCounts{Pending: 2}, Created: train.CreationTimestamp.Time,
			Waiting: "2/2 tasks in gang unschedulable: 0/3 nodes are available, 3 Insufficient cpu"},
	}
	all := m.Jobs(JobFilter{})
	if diff := cmp.Diff(want, all.Items); diff != "" {
		t.Errorf("job rows (-want +got):\n%s", diff)
	}
	if all.Total != 3 || all.Page != 1 {
		t.Errorf("total %d page %d, want 3 and 1", all.Total, all.Page)
	}
	for _, tc := range []struct {
		name string
		f    JobFilter
		want []string
	}{
		{"kind", JobFilter{Kind: KindPodGroup}, []string{"ray-raycluster-pg"}},
		{"phase", JobFilter{Phase: "Pending"}, []string{"train"}},
		{"search", JobFilter{Search: "ra"}, []string{"ray-raycluster-pg", "train"}},
		{"queue none", JobFilter{Queue: "other"}, nil},
		{"newest first", JobFilter{Sort: "newest"}, []string{"fresh", "train", "ray-raycluster-pg"}},
		{"second page", JobFilter{Page: 2, PageSize: 2}, []string{"train"}},
		{"page past the end is the last", JobFilter{Page: 9, PageSize: 2}, []string{"train"}},
	} {
		var got []string
		for _, j := range m.Jobs(tc.f).Items {
			got = append(got, j.Name)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}

	uids, ok := m.EventSubjects(KindJob, "ns", "train")
	if !ok || len(uids) != 4 || uids[0] != train.UID || uids[1] != trainPG.UID {
		t.Errorf("event subjects of train: %v %v, want the job, its PodGroup and two pods", uids, ok)
	}
	d, ok := m.JobDetail(KindJob, "ns", "train", nil)
	if !ok {
		t.Fatal("no detail for train")
	}
	text := strings.Join(d.Explanation, "\n")
	for _, w := range []string{"Job ns/train is Pending", "0/3 nodes are available"} {
		if !strings.Contains(text, w) {
			t.Errorf("explanation lacks %q:\n%s", w, text)
		}
	}
	if len(d.Pods) != 2 || d.Pods[0].Name != "train-worker-0" {
		t.Errorf("pods of train: %+v", d.Pods)
	}
	if _, ok := m.JobDetail(KindPodGroup, "ns", "train", nil); ok {
		t.Error("a Job row was found as a PodGroup")
	}
}

func hyperNode(name string, tier int32, memberType topologyv1alpha1.MemberType, members ...string) *topologyv1alpha1.HyperNode {
	h := &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
	h.Spec.Tier = tier
	for _, m := range members {
		h.Spec.Members = append(h.Spec.Members, topologyv1alpha1.MemberSpec{Type: memberType,
			Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: m}}})
	}
	return h
}

func TestNodesAndHyperNodes(t *testing.T) {
	notReady := st.MakeNode("n3").Alloc("cpu", "8", "memory", "32Gi").Obj()
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	gpu := st.MakeNode("n1").Alloc("cpu", "16", "memory", "64Gi", "volcano.sh/gpu-number", "4", "volcano.sh/gpu-memory", "64000").Obj()
	gpu.Annotations = map[string]string{schedulingv1beta1.GPUUnhealthyAnnotation: "3"}
	in := Input{Now: now,
		Nodes: []*corev1.Node{gpu, st.MakeNode("n2").Alloc("cpu", "16", "memory", "64Gi").Obj(), notReady},
		HyperNodes: []*topologyv1alpha1.HyperNode{
			hyperNode("spine", 2, topologyv1alpha1.MemberTypeHyperNode, "leaf-a", "leaf-b"),
			hyperNode("leaf-a", 1, topologyv1alpha1.MemberTypeNode, "n1", "n2"),
			hyperNode("leaf-b", 1, topologyv1alpha1.MemberTypeNode, "n3"),
		},
		PodGroups: []*schedulingv1beta1.PodGroup{podGroup("ns", "g", "q", schedulingv1beta1.PodGroupRunning, 1)},
		Pods: []*corev1.Pod{
			st.MakePod("ns", "share").Group("g").Node("n1").Phase(corev1.PodRunning).Req("cpu", "2", "volcano.sh/gpu-memory", "4000").
				Annotation(schedulingv1beta1.GPUIndexAnnotation, "0").Obj(),
			st.MakePod("ns", "whole").Node("n1").Phase(corev1.PodRunning).Req("cpu", "4", "volcano.sh/gpu-number", "2").
				Annotation(schedulingv1beta1.GPUIndexAnnotation, "1,2").Obj(),
			st.MakePod("ns", "done").Node("n2").Phase(corev1.PodSucceeded).Req("cpu", "16").Obj(),
			st.MakePod("ns", "n2-pod").Node("n2").Phase(corev1.PodRunning).Req("cpu", "500m", "memory", "1Gi").Obj(),
		}}
	m := Build(in)
	page := m.Nodes(NodeFilter{})
	if page.Total != 3 {
		t.Fatalf("%d nodes, want 3", page.Total)
	}
	n1 := page.Items[0]
	wantUsage := []Usage{
		{Resource: "cpu", Allocatable: "16", Requested: "6", Use: 6.0 / 16},
		{Resource: "memory", Allocatable: "64Gi", Requested: "0"},
		{Resource: "volcano.sh/gpu-memory", Allocatable: "64k", Requested: "4k", Use: 4000.0 / 64000},
		{Resource: "volcano.sh/gpu-number", Allocatable: "4", Requested: "2", Use: 0.5},
	}
	if diff := cmp.Diff(wantUsage, n1.Resources); diff != "" {
		t.Errorf("n1 usage (-want +got):\n%s", diff)
	}
	wantCards := []Card{
		{Index: 0, Healthy: true, Memory: 16000, Used: 4000, Pods: []string{"ns/share"}},
		{Index: 1, Healthy: true, Memory: 16000, Used: 16000, Pods: []string{"ns/whole"}},
		{Index: 2, Healthy: true, Memory: 16000, Used: 16000, Pods: []string{"ns/whole"}},
		{Index: 3, Healthy: false, Memory: 16000, Pods: []string{}},
	}
	if diff := cmp.Diff(wantCards, n1.Cards); diff != "" {
		t.Errorf("n1 cards (-want +got):\n%s", diff)
	}
	if n1.HyperNode != "leaf-a" || len(n1.Pods) != 2 || n1.Pods[0].Queue != "q" || n1.Pods[1].Queue != "" {
		t.Errorf("n1: hypernode %q pods %+v", n1.HyperNode, n1.Pods)
	}
	if n2 := page.Items[1]; len(n2.Pods) != 1 || n2.Resources[0].Requested != "500m" {
		t.Errorf("n2 counts a finished pod: %+v", n2)
	}

	var tree []string
	for _, h := range m.HyperNodes() {
		tree = append(tree, fmt.Sprintf("%s%s %d/%d cpu %s/%s", strings.Repeat(" ", h.Depth), h.Name, h.ReadyNodes, h.Nodes,
			h.Resources[0].Requested, h.Resources[0].Allocatable))
	}
	wantTree := []string{"spine 2/3 cpu 6500m/40", " leaf-a 2/2 cpu 6500m/32", " leaf-b 0/1 cpu 0/8"}
	if diff := cmp.Diff(wantTree, tree); diff != "" {
		t.Errorf("HyperNode tree (-want +got):\n%s", diff)
	}
	var under []string
	for _, n := range m.Nodes(NodeFilter{HyperNode: "leaf-a"}).Items {
		under = append(under, n.Name)
	}
	if diff := cmp.Diff([]string{"n1", "n2"}, under); diff != "" {
		t.Errorf("nodes under leaf-a (-want +got):\n%s", diff)
	}
	tot := m.Totals()
	if tot.Nodes != 3 || tot.ReadyNodes != 2 || tot.Pods != 3 || tot.BoundPods != 3 || tot.HyperNodes != 3 {
		t.Errorf("totals %+v", tot)
	}
}

// Every pod that holds a node is counted once on it, and every pod of a
// PodGroup once in its row, whatever the mix.
func TestPodsCountedOnce(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 7))
		in := Input{Now: now}
		for i := range 1 + r.IntN(6) {
			in.Nodes = append(in.Nodes, st.MakeNode(fmt.Sprintf("n%d", i)).Alloc("cpu", "64").Obj())
		}
		for i := range r.IntN(5) {
			in.PodGroups = append(in.PodGroups, podGroup("ns", fmt.Sprintf("g%d", i), "q", schedulingv1beta1.PodGroupRunning, 1))
		}
		wantMilli, wantBound, wantGrouped := int64(0), 0, 0
		phases := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed}
		for i := range r.IntN(40) {
			p := st.MakePod("ns", fmt.Sprintf("p%d", i)).Req("cpu", fmt.Sprintf("%dm", 1+r.IntN(2000))).Phase(phases[r.IntN(4)])
			if g := r.IntN(len(in.PodGroups) + 2); g < len(in.PodGroups) {
				p.Group(in.PodGroups[g].Name)
				wantGrouped++
			}
			if r.IntN(3) > 0 {
				p.Node(in.Nodes[r.IntN(len(in.Nodes))].Name)
			}
			o := p.Obj()
			if o.Spec.NodeName != "" && !finished(o) {
				wantBound++
				wantMilli += o.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
			}
			in.Pods = append(in.Pods, o)
		}
		m := Build(in)
		gotBound, gotMilli := 0, int64(0)
		for _, n := range m.Nodes(NodeFilter{PageSize: MaxPageSize}).Items {
			gotBound += len(n.Pods)
			gotMilli += n.requested["cpu"]
		}
		gotGrouped := 0
		for _, j := range m.Jobs(JobFilter{PageSize: MaxPageSize}).Items {
			gotGrouped += j.Pods.Pending + j.Pods.Running + j.Pods.Succeeded + j.Pods.Failed
		}
		if gotBound != wantBound || gotMilli != wantMilli || gotGrouped != wantGrouped || m.Totals().BoundPods != wantBound {
			t.Fatalf("seed %d: bound %d (totals %d) cpu %dm grouped %d, want %d, %dm, %d", seed, gotBound, m.Totals().BoundPods, gotMilli, gotGrouped, wantBound, wantMilli, wantGrouped)
		}
	}
}

func TestHistory(t *testing.T) {
	h := NewHistory(3)
	q := func(name string, share float64) Queue {
		return Queue{Name: name, Resources: []QueueResource{{Resource: "cpu", Share: share, ShareOf: ShareOfDeserved}, {Resource: "memory"}}}
	}
	at := func(i int) time.Time { return now.Add(time.Duration(i) * 10 * time.Second) }
	h.Add(at(0), []Queue{q("a", 0.1)})
	h.Add(at(1), []Queue{q("a", 0.2), q("b", 0.5)})
	h.Add(at(2), []Queue{q("b", 0.6)})
	h.Add(at(3), []Queue{q("b", 0.7)})
	a, b := h.Series("a"), h.Series("b")
	if diff := cmp.Diff(Series{Queue: "a", Times: []time.Time{at(1), at(2), at(3)}, Shares: map[string][]float64{"cpu": {0.2, -1, -1}}}, a); diff != "" {
		t.Errorf("a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]float64{"cpu": {0.5, 0.6, 0.7}}, b.Shares); diff != "" {
		t.Errorf("b (-want +got):\n%s", diff)
	}
	h.Add(at(4), []Queue{q("b", 0.8)})
	if got := h.Series("a").Shares; len(got) != 0 {
		t.Errorf("a queue gone for the whole window is still held: %v", got)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		r     corev1.ResourceName
		milli int64
		want  string
	}{
		{"cpu", 1500, "1500m"},
		{"memory", 16 << 30 * 1000, "16Gi"},
		{"kubernetes.io/batch-memory", 5153960755 * 1000, "4915Mi"},
		{"memory", 1000 * 1000, "1k"},
		{"volcano.sh/gpu-memory", 64000 * 1000, "64k"},
	} {
		if got := format(tc.r, tc.milli); got != tc.want {
			t.Errorf("format(%s, %d) = %s, want %s", tc.r, tc.milli, got, tc.want)
		}
	}
}
