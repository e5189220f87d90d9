package resourcestrategyfit

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/enqueue"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/priority"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func newPlugin(t *testing.T, a *configv1alpha1.ResourceStrategyFitArgs) *Plugin {
	t.Helper()
	p, err := New(a, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*Plugin)
	pl.OnSessionOpen(nil)
	return pl
}

// nodesOf builds the snapshot's nodes, with the bound pods counted.
func nodesOf(nodes []*corev1.Node, bound ...*corev1.Pod) map[string]*api.NodeInfo {
	return api.Build(api.Objects{Nodes: nodes, Pods: bound}).Nodes
}

func task(pod *corev1.Pod) *api.TaskInfo { return api.NewTaskInfo(pod, "ns/job") }

func scoresOf(p *Plugin, t *api.TaskInfo, nodes map[string]*api.NodeInfo) map[string]float64 {
	var list []*api.NodeInfo
	var names []string
	for name, n := range nodes {
		list = append(list, n)
		names = append(names, name)
	}
	s := make([]float64, len(list))
	p.ScoreNodes(t, list, s)
	out := map[string]float64{}
	for i, name := range names {
		out[name] = math.Round(s[i]*100) / 100
	}
	return out
}

func rs(typ configv1alpha1.ScoringStrategy, w int32) configv1alpha1.ResourceStrategy {
	return configv1alpha1.ResourceStrategy{Type: typ, Weight: &w}
}

// TestStrategies: two 8-CPU, 8-GPU nodes, one with 4 CPUs and 4 GPUs in
// use. A GPU task scored MostAllocated on GPUs prefers the used node; the
// same task scored LeastAllocated on CPUs prefers the empty one; mixed,
// the weights decide.
func TestStrategies(t *testing.T) {
	nodes := nodesOf([]*corev1.Node{
		st.MakeNode("used").Alloc("cpu", "8", "nvidia.com/gpu", "8").Obj(),
		st.MakeNode("empty").Alloc("cpu", "8", "nvidia.com/gpu", "8").Obj(),
	}, st.MakePod("ns", "busy").Req("cpu", "4", "nvidia.com/gpu", "4").Node("used").Phase(corev1.PodRunning).Obj())
	gpuTask := task(st.MakePod("ns", "w").Req("cpu", "2", "nvidia.com/gpu", "2").Obj())
	for name, tc := range map[string]struct {
		resources map[string]configv1alpha1.ResourceStrategy
		want      map[string]float64
	}{
		"MostAllocated packs": {
			resources: map[string]configv1alpha1.ResourceStrategy{"nvidia.com/gpu": rs(configv1alpha1.MostAllocated, 1)},
			// (4+2)/8 and 2/8 of 100, times weight 10.
			want: map[string]float64{"used": 750, "empty": 250},
		},
		"LeastAllocated spreads": {
			resources: map[string]configv1alpha1.ResourceStrategy{"cpu": rs(configv1alpha1.LeastAllocated, 1)},
			want:      map[string]float64{"used": 250, "empty": 750},
		},
		"weighted mean of both": {
			resources: map[string]configv1alpha1.ResourceStrategy{
				"nvidia.com/gpu": rs(configv1alpha1.MostAllocated, 3),
				"cpu":            rs(configv1alpha1.LeastAllocated, 1),
			},
			// used: (3×75 + 1×25)/4 = 62.5; empty: (3×25 + 1×75)/4 = 37.5.
			want: map[string]float64{"used": 625, "empty": 375},
		},
		"a prefix entry matches": {
			resources: map[string]configv1alpha1.ResourceStrategy{"nvidia.com/*": rs(configv1alpha1.MostAllocated, 1)},
			want:      map[string]float64{"used": 750, "empty": 250},
		},
		"an exact entry beats a prefix": {
			resources: map[string]configv1alpha1.ResourceStrategy{
				"nvidia.com/*":   rs(configv1alpha1.LeastAllocated, 1),
				"nvidia.com/gpu": rs(configv1alpha1.MostAllocated, 1),
			},
			want: map[string]float64{"used": 750, "empty": 250},
		},
		"the longest prefix wins": {
			resources: map[string]configv1alpha1.ResourceStrategy{
				"nvidia.com/*": rs(configv1alpha1.LeastAllocated, 1),
				"nvidia.*":     rs(configv1alpha1.MostAllocated, 1),
			},
			want: map[string]float64{"used": 250, "empty": 750},
		},
		"resources without an entry do not count": {
			resources: map[string]configv1alpha1.ResourceStrategy{"memory": rs(configv1alpha1.MostAllocated, 1)},
			want:      map[string]float64{"used": 0, "empty": 0},
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := newPlugin(t, &configv1alpha1.ResourceStrategyFitArgs{Resources: tc.resources})
			if diff := cmp.Diff(tc.want, scoresOf(p, gpuTask, nodes)); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestPodAnnotations: a pod's annotations replace the strategies and the
// resources that count; invalid ones reject the pod, naming the
// annotation.
func TestPodAnnotations(t *testing.T) {
	nodes := nodesOf([]*corev1.Node{
		st.MakeNode("used").Alloc("cpu", "8", "nvidia.com/gpu", "8").Obj(),
		st.MakeNode("empty").Alloc("cpu", "8", "nvidia.com/gpu", "8").Obj(),
	}, st.MakePod("ns", "busy").Req("cpu", "4", "nvidia.com/gpu", "4").Node("used").Phase(corev1.PodRunning).Obj())
	args := func() *configv1alpha1.ResourceStrategyFitArgs {
		return &configv1alpha1.ResourceStrategyFitArgs{Resources: map[string]configv1alpha1.ResourceStrategy{
			"cpu":            rs(configv1alpha1.LeastAllocated, 1),
			"nvidia.com/gpu": rs(configv1alpha1.MostAllocated, 1),
		}}
	}
	pod := func(annotations ...string) *api.TaskInfo {
		w := st.MakePod("ns", "w").Req("cpu", "2", "nvidia.com/gpu", "2")
		for i := 0; i < len(annotations); i += 2 {
			w.Annotation(annotations[i], annotations[i+1])
		}
		return task(w.Obj())
	}
	for name, tc := range map[string]struct {
		task *api.TaskInfo
		want map[string]float64
	}{
		"configured":                      {task: pod(), want: map[string]float64{"used": 500, "empty": 500}},
		"scoring type for every resource": {task: pod(ScoringTypeAnnotation, "MostAllocated"), want: map[string]float64{"used": 750, "empty": 250}},
		"weights choose the resources":    {task: pod(WeightAnnotation, `{"cpu": 1}`), want: map[string]float64{"used": 250, "empty": 750}},
		"both": {
			task: pod(ScoringTypeAnnotation, "MostAllocated", WeightAnnotation, `{"cpu": 1}`),
			want: map[string]float64{"used": 750, "empty": 250},
		},
		"a resource the configuration lacks spreads by default": {
			task: pod(WeightAnnotation, `{"nvidia.com/gpu": 1, "example.com/x": 5}`),
			want: map[string]float64{"used": 750, "empty": 250},
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := newPlugin(t, args())
			if s := p.PrePredicate(tc.task); s != nil {
				t.Fatalf("PrePredicate rejected: %v", s)
			}
			if diff := cmp.Diff(tc.want, scoresOf(p, tc.task, nodes)); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
	for name, tc := range map[string]struct {
		task *api.TaskInfo
		want string
	}{
		"unknown scoring type": {
			task: pod(ScoringTypeAnnotation, "Packed"),
			want: `annotation volcano.sh/resource-strategy-scoring-type: "Packed" is neither MostAllocated nor LeastAllocated`,
		},
		"weights not JSON": {
			task: pod(WeightAnnotation, `cpu=1`),
			want: `annotation volcano.sh/resource-strategy-weight: want a JSON object of resource name to weight, like {"cpu": 1}`,
		},
		"negative weight": {
			task: pod(WeightAnnotation, `{"cpu": -1}`),
			want: `annotation volcano.sh/resource-strategy-weight: weight of cpu is -1, must not be negative`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := newPlugin(t, args())
			s := p.PrePredicate(tc.task)
			if s == nil || !s.Unresolvable() || !strings.HasPrefix(strings.Join(s.Reasons, "; "), tc.want) {
				t.Errorf("PrePredicate = %v, want an unresolvable rejection starting %q", s, tc.want)
			}
		})
	}
}

// TestRetention is docs/resource-strategy-fit.md's retention example:
// tasks that do not ask for the scarce t4 and a10 prefer nodes without
// them.
func TestRetention(t *testing.T) {
	nodes := nodesOf([]*corev1.Node{
		st.MakeNode("node1").Alloc("cpu", "32", "memory", "64Gi").Obj(),
		st.MakeNode("node2").Alloc("cpu", "16", "memory", "32Gi", "nvidia.com/t4", "10").Obj(),
		st.MakeNode("node3").Alloc("cpu", "16", "memory", "32Gi", "nvidia.com/t4", "5", "nvidia.com/a10", "10").Obj(),
	})
	p := newPlugin(t, &configv1alpha1.ResourceStrategyFitArgs{
		Weight: new(int32(0)),
		SRA: &configv1alpha1.ScarceResourceAvoidance{
			Policy:          configv1alpha1.SRARetention,
			Resources:       map[corev1.ResourceName]int32{"nvidia.com/t4": 1, "nvidia.com/a10": 1},
			RetentionWeight: new(int32(2)),
		},
	})
	for name, tc := range map[string]struct {
		req  []string
		want map[string]float64
	}{
		"cpu task":      {req: []string{"cpu", "2", "memory", "4Gi"}, want: map[string]float64{"node1": 200, "node2": 100, "node3": 0}},
		"t4 task":       {req: []string{"cpu", "2", "memory", "4Gi", "nvidia.com/t4", "2"}, want: map[string]float64{"node1": 0, "node2": 100, "node3": 0}},
		"t4 + a10 task": {req: []string{"cpu", "2", "memory", "4Gi", "nvidia.com/t4", "1", "nvidia.com/a10", "2"}, want: map[string]float64{"node1": 0, "node2": 0, "node3": 0}},
	} {
		t.Run(name, func(t *testing.T) {
			tk := task(st.MakePod("ns", "t").Req(tc.req...).Obj())
			if diff := cmp.Diff(tc.want, scoresOf(p, tk, nodes)); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestProportional is docs/resource-strategy-fit.md's proportional
// example: 8 CPUs and 8G kept per idle GPU on a 74-CPU, 128G, 8-GPU node.
func TestProportional(t *testing.T) {
	p := newPlugin(t, &configv1alpha1.ResourceStrategyFitArgs{SRA: &configv1alpha1.ScarceResourceAvoidance{
		Policy:    configv1alpha1.SRAProportional,
		Resources: map[corev1.ResourceName]int32{"nvidia.com/gpu": 1},
		Proportional: map[corev1.ResourceName]configv1alpha1.ResourceReservation{
			"nvidia.com/gpu": {CPU: new(resource.MustParse("8")), Memory: new(resource.MustParse("8G"))},
		},
	}})
	node := st.MakeNode("n").Alloc("cpu", "74", "memory", "128G", "nvidia.com/gpu", "8").Obj()
	first := st.MakePod("ns", "single-0").Req("cpu", "8", "memory", "8G").Node("n").Phase(corev1.PodRunning).Obj()
	cpuTask := task(st.MakePod("ns", "single-1").Req("cpu", "8", "memory", "8G").Obj())
	gpuTask := task(st.MakePod("ns", "gpu").Req("cpu", "8", "memory", "8G", "nvidia.com/gpu", "1").Obj())

	empty := nodesOf([]*corev1.Node{node})["n"]
	if s := p.Predicate(cpuTask, empty); s != nil {
		t.Errorf("first cpu task rejected on the empty node (66 CPUs left for 64): %v", s)
	}
	withFirst := nodesOf([]*corev1.Node{node}, first)["n"]
	s := p.Predicate(cpuTask, withFirst)
	if want := "would keep too little cpu for their idle nvidia.com/gpu (8 cpu per unit, sra proportional)"; s == nil || s.Reasons[0] != want || s.Unresolvable() {
		t.Errorf("second cpu task: %v, want a resolvable rejection %q", s, want)
	}
	if s := p.Predicate(gpuTask, withFirst); s != nil {
		t.Errorf("gpu task rejected: %v (tasks using the scarce resource are not held back)", s)
	}
	victim := api.NewTaskInfo(first, "ns/other")
	if s := p.PredicateWithout(cpuTask, withFirst, []*api.TaskInfo{victim}); s != nil {
		t.Errorf("with the first task evicted the second still rejected: %v", s)
	}
	memTask := task(st.MakePod("ns", "mem").Req("cpu", "1", "memory", "70G").Obj())
	if s := p.Predicate(memTask, empty); s == nil || !strings.Contains(s.Reasons[0], "too little memory") {
		t.Errorf("memory-heavy task: %v, want a memory rejection", s)
	}
}

type recorder struct{ binds map[string]string }

func (r *recorder) Bind(t *api.TaskInfo, node string) { r.binds[t.Name] = node }

// TestAllocate runs a cycle with the AI configuration of
// docs/resource-strategy-fit.md: GPU workers pack onto one GPU node,
// CPU-only pods spread, and stay off the GPU nodes while CPU nodes have
// room.
func TestAllocate(t *testing.T) {
	var nodes []*corev1.Node
	for i := range 2 {
		nodes = append(nodes, st.MakeNode(fmt.Sprintf("gpu-%d", i)).Alloc("cpu", "32", "memory", "128Gi", "nvidia.com/gpu", "8").Obj())
		nodes = append(nodes, st.MakeNode(fmt.Sprintf("cpu-%d", i)).Alloc("cpu", "32", "memory", "128Gi").Obj())
	}
	objs := api.Objects{Nodes: nodes, Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}}
	add := func(name string, n int, req ...string) {
		objs.PodGroups = append(objs.PodGroups, schedtesting.MakePodGroup(name, "ns").MinMember(int32(n)).Phase(schedulingv1beta1.PodGroupInqueue).Obj())
		for i := range n {
			objs.Pods = append(objs.Pods, st.MakePod("ns", fmt.Sprintf("%s-%d", name, i)).Group(name).Req(req...).Obj())
		}
	}
	add("workers", 4, "cpu", "2", "nvidia.com/gpu", "1")
	add("masters", 4, "cpu", "2")
	rsf, err := New(&configv1alpha1.ResourceStrategyFitArgs{
		Resources: map[string]configv1alpha1.ResourceStrategy{
			"nvidia.com/gpu": rs(configv1alpha1.MostAllocated, 2),
			"cpu":            rs(configv1alpha1.LeastAllocated, 1),
		},
		SRA: &configv1alpha1.ScarceResourceAvoidance{
			Policy: configv1alpha1.SRARetention, Resources: map[corev1.ResourceName]int32{"nvidia.com/gpu": 1}, RetentionWeight: new(int32(10)),
		},
	}, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	var plugins []framework.TierPlugin
	for _, f := range []framework.PluginFactory{priority.New, gang.New} {
		p, err := f(nil, &framework.Handle{})
		if err != nil {
			t.Fatal(err)
		}
		plugins = append(plugins, framework.TierPlugin{Plugin: p})
	}
	plugins = append(plugins, framework.TierPlugin{Plugin: rsf})
	r := &recorder{binds: map[string]string{}}
	ssn := framework.OpenSession(t.Context(), api.Build(objs), []framework.Tier{{Plugins: plugins}}, framework.Options{Sink: r})
	enqueue.New().Execute(ssn)
	allocate.New().Execute(ssn)
	ssn.Close()

	perNode := map[string]map[string]int{}
	for pod, node := range r.binds {
		job := pod[:strings.LastIndexByte(pod, '-')]
		if perNode[job] == nil {
			perNode[job] = map[string]int{}
		}
		perNode[job][node]++
	}
	if w := perNode["workers"]; len(w) != 1 || (w["gpu-0"] != 4 && w["gpu-1"] != 4) {
		t.Errorf("workers on %v, want all 4 on one GPU node", w)
	}
	if m := perNode["masters"]; m["cpu-0"] != 2 || m["cpu-1"] != 2 {
		t.Errorf("masters on %v, want 2 on each CPU node", m)
	}
}

// TestAnnotatedPodsAreNotAlike: two pods of the same request, one packing
// and one spreading by annotation, in one cycle: each gets its own scores
// (the plugin signs tasks by their annotations).
func TestAnnotatedPodsAreNotAlike(t *testing.T) {
	objs := api.Objects{
		Nodes: []*corev1.Node{
			st.MakeNode("a").Alloc("cpu", "8").Obj(),
			st.MakeNode("b").Alloc("cpu", "8").Obj(),
		},
		Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()},
		Pods:   []*corev1.Pod{st.MakePod("other", "busy").Req("cpu", "4").Node("a").Phase(corev1.PodRunning).Obj()},
	}
	for _, tc := range []struct{ name, typ string }{{"pack", "MostAllocated"}, {"spread", "LeastAllocated"}} {
		objs.PodGroups = append(objs.PodGroups, schedtesting.MakePodGroup(tc.name, "ns").MinMember(1).Phase(schedulingv1beta1.PodGroupInqueue).Obj())
		objs.Pods = append(objs.Pods, st.MakePod("ns", tc.name).Group(tc.name).Req("cpu", "1").Annotation(ScoringTypeAnnotation, tc.typ).Obj())
	}
	p, err := New(&configv1alpha1.ResourceStrategyFitArgs{Resources: map[string]configv1alpha1.ResourceStrategy{
		"cpu": rs(configv1alpha1.LeastAllocated, 1),
	}}, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{binds: map[string]string{}}
	ssn := framework.OpenSession(t.Context(), api.Build(objs), []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: p}}}}, framework.Options{Sink: r})
	enqueue.New().Execute(ssn)
	allocate.New().Execute(ssn)
	ssn.Close()
	if diff := cmp.Diff(map[string]string{"pack": "a", "spread": "b"}, r.binds); diff != "" {
		t.Errorf("binds (-want,+got):\n%s", diff)
	}
}
