package preempt

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework/frameworktest"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/conformance"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/priority"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func tiers(t *testing.T) []framework.Tier {
	return []framework.Tier{frameworktest.Tier(t, nil, priority.New, gang.New, conformance.New)}
}

// pod is a pod of priority prio asking for cpu; on a node when node is set.
func pod(name, cpu string, prio int32, node string) *corev1.Pod {
	w := st.MakePod("ns", name).Req("cpu", cpu).Priority(prio)
	if node != "" {
		w = w.Node(node).Phase(corev1.PodRunning)
	}
	return w.Obj()
}

func inQueue(q string, pods ...*corev1.Pod) []*corev1.Pod {
	for _, p := range pods {
		p.Annotations = map[string]string{schedulingv1beta1.QueueNameAnnotation: q}
	}
	return pods
}

func run(t *testing.T, o api.Objects) *frameworktest.Recorder {
	t.Helper()
	o.Queues = append(o.Queues, schedtesting.MakeQueue("default").Obj(), schedtesting.MakeQueue("other").Obj())
	return frameworktest.Run(t, api.Build(o), tiers(t), framework.Options{}, New(nil))
}

func node(name, cpu string) *corev1.Node { return st.MakeNode(name).Alloc("cpu", cpu).Obj() }

func TestPreempt(t *testing.T) {
	cases := map[string]struct {
		objects api.Objects
		want    []string
	}{
		"a higher-priority pod evicts the lowest-priority pod that makes room": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods: []*corev1.Pod{
					pod("low", "2", 1, "n1"), pod("mid", "2", 5, "n1"),
					pod("high", "2", 10, ""),
				},
			},
			want: []string{"low"},
		},
		"the node needing the fewest victims is chosen": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				Pods: []*corev1.Pod{
					pod("a1", "2", 1, "n1"), pod("a2", "2", 1, "n1"),
					pod("b1", "4", 1, "n2"),
					pod("high", "4", 10, ""),
				},
			},
			want: []string{"b1"},
		},
		"equal priority evicts nothing": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("peer", "4", 10, "n1"), pod("high", "2", 10, "")},
			},
		},
		"another queue's pods are not preempted (that is reclaim)": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  append(inQueue("other", pod("low", "4", 1, "n1")), pod("high", "2", 10, "")),
			},
		},
		"a pod that never preempts evicts nothing": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods: func() []*corev1.Pod {
					p := pod("high", "2", 10, "")
					never := corev1.PreemptNever
					p.Spec.PreemptionPolicy = &never
					return []*corev1.Pod{pod("low", "4", 1, "n1"), p}
				}(),
			},
		},
		"taking a pod of a running gang at its minimum evicts the whole gang, on every node": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{schedtesting.MakePodGroup("g", "ns").MinMember(2).Phase(schedulingv1beta1.PodGroupRunning).Obj()},
				Pods: func() []*corev1.Pod {
					g0 := st.MakePod("ns", "g-0").Group("g").Req("cpu", "4").Priority(1).Node("n1").Phase(corev1.PodRunning).Obj()
					g1 := st.MakePod("ns", "g-1").Group("g").Req("cpu", "4").Priority(1).Node("n2").Phase(corev1.PodRunning).Obj()
					return []*corev1.Pod{g0, g1, pod("high", "2", 10, "")}
				}(),
			},
			want: []string{"g-0", "g-1"},
		},
		"a pod its job can spare goes before a gang is broken": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{
					schedtesting.MakePodGroup("a", "ns").MinMember(2).Phase(schedulingv1beta1.PodGroupRunning).Obj(),
					schedtesting.MakePodGroup("z", "ns").MinMember(1).Phase(schedulingv1beta1.PodGroupRunning).Obj(),
				},
				Pods: []*corev1.Pod{
					st.MakePod("ns", "a-0").Group("a").Req("cpu", "2").Priority(1).Node("n1").Phase(corev1.PodRunning).Obj(),
					st.MakePod("ns", "a-1").Group("a").Req("cpu", "2").Priority(1).Node("n2").Phase(corev1.PodRunning).Obj(),
					st.MakePod("ns", "z-0").Group("z").Req("cpu", "2").Priority(1).Node("n1").Phase(corev1.PodRunning).Obj(),
					st.MakePod("ns", "z-1").Group("z").Req("cpu", "2").Priority(1).Node("n2").Phase(corev1.PodRunning).Obj(),
					pod("high", "2", 10, ""),
				},
			},
			want: []string{"z-0"},
		},
		"a gang with a pod that may not be preempted is not broken": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4"), node("n2", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{schedtesting.MakePodGroup("g", "ns").MinMember(2).Phase(schedulingv1beta1.PodGroupRunning).Obj()},
				Pods: []*corev1.Pod{
					st.MakePod("ns", "g-0").Group("g").Req("cpu", "4").Priority(1).Node("n1").Phase(corev1.PodRunning).Obj(),
					st.MakePod("ns", "g-1").Group("g").Req("cpu", "4").Priority(1).Node("n2").Phase(corev1.PodRunning).Annotation(schedulingv1beta1.PreemptableKey, "false").Obj(),
					pod("high", "2", 10, ""),
				},
			},
		},
		"a pod annotated not preemptable is never a victim": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")},
				Pods: []*corev1.Pod{
					st.MakePod("ns", "kept").Req("cpu", "4").Priority(1).Node("n1").Phase(corev1.PodRunning).Annotation(schedulingv1beta1.PreemptableKey, "false").Obj(),
					st.MakePod("ns", "typo").Req("cpu", "4").Priority(1).Node("n2").Phase(corev1.PodRunning).Annotation(schedulingv1beta1.PreemptableKey, "nope").Obj(),
					pod("high", "2", 10, ""),
				},
			},
		},
		"a job whose PodGroup's PriorityClass never preempts evicts nothing": {
			objects: api.Objects{
				Nodes:     []*corev1.Node{node("n1", "4")},
				PodGroups: []*schedulingv1beta1.PodGroup{schedtesting.MakePodGroup("h", "ns").MinMember(1).Phase(schedulingv1beta1.PodGroupInqueue).PriorityClassName("never").Obj()},
				Pods: []*corev1.Pod{
					pod("low", "4", 1, "n1"),
					st.MakePod("ns", "h-0").Group("h").Req("cpu", "2").Priority(10).Obj(),
				},
				PriorityOf:    func(string) int32 { return 10 },
				NeverPreempts: func(class string) bool { return class == "never" },
			},
		},
		"a room that evictions cannot make is not attempted": {
			objects: api.Objects{
				Nodes: []*corev1.Node{node("n1", "4")},
				Pods:  []*corev1.Pod{pod("low", "1", 1, "n1"), pod("huge", "8", 10, "")},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, tc.objects)
			if diff := cmp.Diff(tc.want, r.Evictions); diff != "" {
				t.Errorf("evictions (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestGangs: a lower-priority gang whose every placed pod is
// on the chosen node goes whole; a higher-priority gang that evictions
// cannot complete evicts nothing.
func TestGangs(t *testing.T) {
	gangOn := func(name string, min int32, prio int32, nodes ...string) ([]*corev1.Pod, *schedulingv1beta1.PodGroup) {
		var pods []*corev1.Pod
		for i, n := range nodes {
			w := st.MakePod("ns", name+"-"+string(rune('0'+i))).Group(name).Req("cpu", "2").Priority(prio)
			if n != "" {
				w = w.Node(n).Phase(corev1.PodRunning)
			}
			pods = append(pods, w.Obj())
		}
		phase := schedulingv1beta1.PodGroupInqueue
		if nodes[0] != "" {
			phase = schedulingv1beta1.PodGroupRunning
		}
		return pods, schedtesting.MakePodGroup(name, "ns").MinMember(min).Phase(phase).PriorityClassName(fmt.Sprint(prio)).Obj()
	}
	// PriorityClass names are their values.
	priorityOf := func(class string) int32 {
		v, _ := strconv.Atoi(class)
		return int32(v)
	}
	lowPods, low := gangOn("low", 2, 1, "n1", "n1")
	highPods, high := gangOn("high", 2, 10, "", "")
	r := run(t, api.Objects{
		Nodes:      []*corev1.Node{node("n1", "4")},
		PodGroups:  []*schedulingv1beta1.PodGroup{low, high},
		Pods:       append(lowPods, highPods...),
		PriorityOf: priorityOf,
	})
	if diff := cmp.Diff([]string{"low-0", "low-1"}, r.Evictions); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}

	// One pod's room is enough, but taking it breaks the gang: the gang
	// goes whole.
	lowPods, low = gangOn("low", 2, 1, "n1", "n1")
	onePods, one := gangOn("one", 1, 10, "")
	r = run(t, api.Objects{
		Nodes:      []*corev1.Node{node("n1", "4")},
		PodGroups:  []*schedulingv1beta1.PodGroup{low, one},
		Pods:       append(lowPods, onePods...),
		PriorityOf: priorityOf,
	})
	if diff := cmp.Diff([]string{"low-0", "low-1"}, r.Evictions); diff != "" {
		t.Errorf("evictions for one pod (-want,+got):\n%s", diff)
	}

	lowPods, low = gangOn("low", 1, 1, "n1")
	bigPods, big := gangOn("big", 3, 10, "", "", "")
	r = run(t, api.Objects{
		Nodes:      []*corev1.Node{node("n1", "4")},
		PodGroups:  []*schedulingv1beta1.PodGroup{low, big},
		Pods:       append(lowPods, bigPods...),
		PriorityOf: priorityOf,
	})
	if len(r.Evictions) != 0 {
		t.Errorf("evictions %v for a gang that still would not fit, want none", r.Evictions)
	}
}

// failing is a predicate plugin whose answer for every node is a status of
// its code, as a kube-scheduler plugin's error or pending answer reaches
// the framework.
type failing struct{ code framework.Code }

func (failing) Name() string { return "failing" }
func (f failing) Predicate(*api.TaskInfo, *api.NodeInfo) *framework.Status {
	return &framework.Status{Plugin: "failing", Reasons: []string{"boom"}, Code: f.code}
}

// PredicateWithout: the task would fit once any pod is gone, so only the
// code decides whether preemption tries.
func (f failing) PredicateWithout(t *api.TaskInfo, n *api.NodeInfo, victims []*api.TaskInfo) *framework.Status {
	if len(victims) > 0 {
		return nil
	}
	return f.Predicate(t, n)
}

// TestNoEvictionCuresAnError: preemption evicts only where the task was
// rejected as Unschedulable; a plugin's error, a pending answer or an
// unresolvable rejection is not cured by evicting anyone.
func TestNoEvictionCuresAnError(t *testing.T) {
	for _, tc := range []struct {
		code framework.Code
		want []string
	}{
		{framework.Unschedulable, []string{"low"}},
		{framework.UnschedulableAndUnresolvable, nil},
		{framework.Error, nil},
		{framework.Pending, nil},
	} {
		t.Run(tc.code.String(), func(t *testing.T) {
			o := api.Objects{
				Nodes:  []*corev1.Node{node("n1", "4")},
				Pods:   []*corev1.Pod{pod("low", "4", 1, "n1"), pod("high", "2", 10, "")},
				Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()},
			}
			ts := tiers(t)
			ts[0].Plugins = append(ts[0].Plugins, framework.TierPlugin{Plugin: failing{tc.code}})
			r := frameworktest.Run(t, api.Build(o), ts, framework.Options{}, New(nil))
			if diff := cmp.Diff(tc.want, r.Evictions); diff != "" {
				t.Errorf("evictions (-want,+got):\n%s", diff)
			}
		})
	}
}
