package nodegroup

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

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

// nodes are a0 and a1 in group a, b0 in b, c0 in c, and x0 in none.
func nodes() []*corev1.Node {
	mk := func(name, group string) *corev1.Node {
		n := st.MakeNode(name).Alloc("cpu", "4")
		if group != "" {
			n.Label(LabelKey, group)
		}
		return n.Obj()
	}
	return []*corev1.Node{mk("a0", "a"), mk("a1", "a"), mk("b0", "b"), mk("c0", "c"), mk("x0", "")}
}

func queues() []*schedulingv1beta1.Queue {
	return []*schedulingv1beta1.Queue{
		schedtesting.MakeQueue("default").Obj(),
		schedtesting.MakeQueue("req-a").RequiredNodeGroups("a").Obj(),
		schedtesting.MakeQueue("pref-b").RequiredNodeGroups("a", "b").PreferredNodeGroups("b").Obj(),
		schedtesting.MakeQueue("ordered").RequiredNodeGroups("a", "b").PreferredNodeGroups("b", "a").Obj(),
		schedtesting.MakeQueue("anti").RequiredNodeGroups("a", "b").AvoidedNodeGroups("a").Obj(),
		schedtesting.MakeQueue("soft-c").RequiredNodeGroups("a").DispreferredNodeGroups("c").Obj(),
		schedtesting.MakeQueue("only-b").RequiredNodeGroups("b").Obj(),
		schedtesting.MakeQueue("child").Parent("req-a").Obj(),
		schedtesting.MakeQueue("grandchild").Parent("child").Obj(),
		schedtesting.MakeQueue("own").Parent("req-a").RequiredNodeGroups("c").Obj(),
	}
}

// job is an admitted PodGroup of n 1-CPU pods in queue.
func job(name, queue string, n int) (*schedulingv1beta1.PodGroup, []*corev1.Pod) {
	pg := schedtesting.MakePodGroup(name, "ns").Queue(queue).MinMember(int32(n)).Phase(schedulingv1beta1.PodGroupInqueue).Obj()
	var pods []*corev1.Pod
	for i := range n {
		pods = append(pods, st.MakePod("ns", fmt.Sprintf("%s-%d", name, i)).Group(name).Req("cpu", "1").Obj())
	}
	return pg, pods
}

// open builds a session over nodes(), queues() and one single-pod job per
// queue named after it, with only this plugin.
func open(t *testing.T, o Options) (*Plugin, *framework.Session) {
	t.Helper()
	objs := api.Objects{Nodes: nodes(), Queues: queues()}
	for _, q := range objs.Queues {
		pg, pods := job(q.Name, q.Name, 1)
		objs.PodGroups = append(objs.PodGroups, pg)
		objs.Pods = append(objs.Pods, pods...)
	}
	var args any
	if o.Args != nil {
		args = o.Args
	}
	pl, err := New(args, &framework.Handle{Hierarchy: o.Hierarchy})
	if err != nil {
		t.Fatal(err)
	}
	ssn := framework.OpenSession(t.Context(), api.Build(objs), []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: pl}}}}, framework.Options{})
	t.Cleanup(ssn.Close)
	return pl.(*Plugin), ssn
}

func taskOf(t *testing.T, ssn *framework.Session, queue string) *api.TaskInfo {
	t.Helper()
	j := ssn.Snapshot.Jobs[api.JobID("ns/"+queue)]
	if j == nil {
		t.Fatalf("no job for queue %s", queue)
	}
	for _, task := range j.Tasks {
		return task
	}
	t.Fatalf("job %s has no tasks", queue)
	return nil
}

// fits lists the nodes the queue's pod may run on, and each rejection's
// reason.
func fits(t *testing.T, p *Plugin, ssn *framework.Session, queue string) ([]string, map[string]string) {
	t.Helper()
	task := taskOf(t, ssn, queue)
	var ok []string
	why := map[string]string{}
	for _, n := range ssn.Snapshot.NodeList {
		s := p.Predicate(task, n)
		if s == nil {
			ok = append(ok, n.Name)
			continue
		}
		if !s.Unresolvable() {
			t.Errorf("rejection of %s on %s is resolvable by eviction", queue, n.Name)
		}
		why[n.Name] = strings.Join(s.Reasons, "; ")
	}
	slices.Sort(ok)
	return ok, why
}

func strict(v bool) *configv1alpha1.NodeGroupArgs { return &configv1alpha1.NodeGroupArgs{Strict: &v} }

func TestPredicate(t *testing.T) {
	for name, tc := range map[string]struct {
		opts  Options
		queue string
		want  []string
	}{
		"required groups only":                          {queue: "req-a", want: []string{"a0", "a1"}},
		"preferred groups within required":              {queue: "pref-b", want: []string{"a0", "a1", "b0"}},
		"anti-affinity wins over affinity":              {queue: "anti", want: []string{"b0"}},
		"anti-preferred group is a last resort":         {queue: "soft-c", want: []string{"a0", "a1", "c0"}},
		"strict: a queue without affinity runs nowhere": {queue: "default"},
		"not strict: a queue without affinity runs on ungrouped nodes": {
			opts: Options{Args: strict(false)}, queue: "default", want: []string{"x0"},
		},
		"not strict does not open ungrouped nodes to queues with affinity": {
			opts: Options{Args: strict(false)}, queue: "req-a", want: []string{"a0", "a1"},
		},
		"without hierarchy a child ignores its parent's affinity": {queue: "child"},
		"with hierarchy a child inherits its parent's affinity": {
			opts: Options{Hierarchy: true}, queue: "child", want: []string{"a0", "a1"},
		},
		"with hierarchy the nearest ancestor with affinity counts": {
			opts: Options{Hierarchy: true}, queue: "grandchild", want: []string{"a0", "a1"},
		},
		"with hierarchy a queue's own affinity overrides its parent's": {
			opts: Options{Hierarchy: true}, queue: "own", want: []string{"c0"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, ssn := open(t, tc.opts)
			got, _ := fits(t, p, ssn, tc.queue)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("nodes (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPredicateReasons(t *testing.T) {
	p, ssn := open(t, Options{Hierarchy: true})
	_, why := fits(t, p, ssn, "anti")
	want := map[string]string{
		"a0": `in node group "a", which queue "anti" must avoid (nodeGroupAntiAffinity)`,
		"a1": `in node group "a", which queue "anti" must avoid (nodeGroupAntiAffinity)`,
		"c0": `in node group "c", which queue "anti" does not name in its node-group affinity`,
		"x0": `without a node group (label volcano.sh/nodegroup-name), and queue "anti" has node-group affinity`,
	}
	if diff := cmp.Diff(want, why); diff != "" {
		t.Errorf("reasons (-want,+got):\n%s", diff)
	}
	_, why = fits(t, p, ssn, "grandchild")
	if got, want := why["b0"], `in node group "b", which queue "grandchild" (with the affinity of queue "req-a") does not name in its node-group affinity`; got != want {
		t.Errorf("inherited reason %q, want %q", got, want)
	}
	_, why = fits(t, p, ssn, "default")
	if got, want := why["x0"], `without a node group, and queue "default" has no node-group affinity (the nodegroup plugin is strict)`; got != want {
		t.Errorf("strict reason %q, want %q", got, want)
	}
	if got, want := why["a0"], `in node group "a", and queue "default" has no node-group affinity`; got != want {
		t.Errorf("grouped-node reason %q, want %q", got, want)
	}
}

func TestScores(t *testing.T) {
	for name, tc := range map[string]struct {
		opts  Options
		queue string
		want  map[string]float64
	}{
		"required and preferred add up": {
			queue: "pref-b", want: map[string]float64{"a0": 100, "a1": 100, "b0": 150, "c0": 0, "x0": 0},
		},
		"preferred alike without enablePreferredOrder": {
			queue: "ordered", want: map[string]float64{"a0": 150, "a1": 150, "b0": 150, "c0": 0, "x0": 0},
		},
		"preferred by position with enablePreferredOrder": {
			opts:  Options{Args: &configv1alpha1.NodeGroupArgs{EnablePreferredOrder: new(true)}},
			queue: "ordered", want: map[string]float64{"a0": 125, "a1": 125, "b0": 150, "c0": 0, "x0": 0},
		},
		"anti-preferred scores below everything": {
			queue: "soft-c", want: map[string]float64{"a0": 100, "a1": 100, "b0": 0, "c0": -1, "x0": 0},
		},
		"no affinity, no score": {
			queue: "default", want: map[string]float64{"a0": 0, "a1": 0, "b0": 0, "c0": 0, "x0": 0},
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, ssn := open(t, tc.opts)
			list := ssn.Snapshot.NodeList
			scores := make([]float64, len(list))
			p.ScoreNodes(taskOf(t, ssn, tc.queue), list, scores)
			got := map[string]float64{}
			for i, n := range list {
				got[n.Name] = scores[i]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

type recorder struct{ binds map[string]string }

func (r *recorder) Bind(t *api.TaskInfo, node string) { r.binds[t.Name] = node }

// TestAllocate runs a whole cycle: pods land in their queue's groups,
// preferred groups first, and alike pods of different queues are not
// mistaken for one another (the plugin signs tasks by queue).
func TestAllocate(t *testing.T) {
	objs := api.Objects{Nodes: nodes(), Queues: queues()}
	add := func(name, queue string, n int) {
		pg, pods := job(name, queue, n)
		objs.PodGroups = append(objs.PodGroups, pg)
		objs.Pods = append(objs.Pods, pods...)
	}
	add("pref", "pref-b", 3)   // b0 is preferred and holds all three
	add("grouped", "req-a", 1) // looks like pref's pods to the session
	add("pinned", "only-b", 1) // likewise; b0 keeps a CPU for it
	add("stray", "default", 1)
	var plugins []framework.TierPlugin
	for _, f := range []framework.PluginFactory{priority.New, gang.New, New} {
		p, err := f(nil, &framework.Handle{})
		if err != nil {
			t.Fatal(err)
		}
		plugins = append(plugins, framework.TierPlugin{Plugin: p})
	}
	r := &recorder{binds: map[string]string{}}
	ssn := framework.OpenSession(t.Context(), api.Build(objs), []framework.Tier{{Plugins: plugins}}, framework.Options{Sink: r})
	enqueue.New().Execute(ssn)
	allocate.New().Execute(ssn)
	ssn.Close()

	for i := range 3 {
		if got := r.binds[fmt.Sprintf("pref-%d", i)]; got != "b0" {
			t.Errorf("pref-%d on %q, want b0 (preferred group)", i, got)
		}
	}
	if got := r.binds["grouped-0"]; got != "a0" && got != "a1" {
		t.Errorf("grouped-0 on %q, want group a", got)
	}
	if got := r.binds["pinned-0"]; got != "b0" {
		t.Errorf("pinned-0 on %q, want b0, the only node of group b", got)
	}
	if got, ok := r.binds["stray-0"]; ok {
		t.Errorf("stray-0 bound to %s, want it unplaced (strict, no affinity)", got)
	}
	out := ssn.Outcome("ns/stray").Unschedulable()
	if out == nil || !strings.Contains(out.String(), `5 nodes`) || !strings.Contains(out.String(), `queue "default" has no node-group affinity`) {
		t.Errorf("stray's reason %v, want the node-group verdict over all 5 nodes", out)
	}
}

func TestNewRejectsOtherArguments(t *testing.T) {
	if _, err := New(&configv1alpha1.BinpackArgs{}, &framework.Handle{}); err == nil {
		t.Error("New accepted binpack arguments")
	}
}
