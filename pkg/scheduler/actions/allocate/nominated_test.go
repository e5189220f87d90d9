package allocate

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/capacity"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/proportion"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

type nominations struct {
	recorder
	dropped []string
}

func (n *nominations) Nominate(*api.TaskInfo, string) {}
func (n *nominations) Unnominate(t *api.TaskInfo)     { n.dropped = append(n.dropped, t.Name) }

// TestNominatedTasks: a task nominated for a node (room freed for it by
// evictions) is bound there once the room is free, and nobody else takes
// that room meanwhile; a claim that can no longer be met is dropped and the
// task placed afresh.
func TestNominatedTasks(t *testing.T) {
	nominated := func(name, node string) *corev1.Pod {
		p := st.MakePod("ns", name).Req("cpu", "4").Priority(10).Obj()
		p.Status.NominatedNodeName = node
		return p
	}
	releasing := func(name, node string) *corev1.Pod {
		p := st.MakePod("ns", name).Req("cpu", "4").Priority(1).Node(node).Phase(corev1.PodRunning).Obj()
		now := metav1.Now()
		p.DeletionTimestamp = &now
		return p
	}
	// other has the highest priority and fits n1 only if it takes the
	// claimed room.
	other := st.MakePod("ns", "other").Req("cpu", "2").Priority(100).Obj()
	cases := map[string]struct {
		nodes       []*corev1.Node
		pods        []*corev1.Pod
		wantBinds   []string
		wantDropped []string
	}{
		"the freed room goes to the nominated task, not to a pod that came later": {
			nodes:     []*corev1.Node{st.MakeNode("n1").Alloc("cpu", "4").Obj()},
			pods:      []*corev1.Pod{nominated("pre", "n1"), other},
			wantBinds: []string{"pre->n1"},
		},
		"while the room is being freed the task waits and others go elsewhere": {
			nodes: []*corev1.Node{st.MakeNode("n1").Alloc("cpu", "4").Obj(), st.MakeNode("n2").Alloc("cpu", "2").Obj()},
			pods:  []*corev1.Pod{nominated("pre", "n1"), releasing("victim", "n1"), other},
			// other would fit n1's future room beside nothing else; it
			// goes to n2.
			wantBinds: []string{"other->n2"},
		},
		"a claim that cannot be met is dropped and the task placed afresh": {
			nodes: []*corev1.Node{st.MakeNode("n1").Alloc("cpu", "4").Obj(), st.MakeNode("n2").Alloc("cpu", "4").Obj()},
			pods: []*corev1.Pod{
				nominated("pre", "n1"),
				// The victim's eviction was refused: it runs on.
				st.MakePod("ns", "victim").Req("cpu", "4").Priority(1).Node("n1").Phase(corev1.PodRunning).Obj(),
			},
			wantBinds:   []string{"pre->n2"},
			wantDropped: []string{"pre"},
		},
		"a claim on a node that went away is void": {
			nodes:     []*corev1.Node{st.MakeNode("n2").Alloc("cpu", "4").Obj()},
			pods:      []*corev1.Pod{nominated("pre", "n1")},
			wantBinds: []string{"pre->n2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &nominations{}
			snap := api.Build(api.Objects{
				Nodes:  tc.nodes,
				Pods:   tc.pods,
				Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()},
			})
			ssn := framework.OpenSession(t.Context(), snap, tiers(t), framework.Options{Sink: r, Nominator: r})
			New().Execute(ssn)
			ssn.Close()
			slices.Sort(r.binds)
			if diff := cmp.Diff(tc.wantBinds, r.binds); diff != "" {
				t.Errorf("binds (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDropped, r.dropped); diff != "" {
				t.Errorf("dropped claims (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestNominatedTaskInAFullQueue: the queue counts a claim in what it holds,
// so a queue that the claim fills (to its capability, or to its share)
// still lets the task be bound.
func TestNominatedTaskInAFullQueue(t *testing.T) {
	for name, plugin := range map[string]framework.PluginFactory{"capacity": capacity.New, "proportion": proportion.New} {
		t.Run(name, func(t *testing.T) {
			pre := st.MakePod("ns", "pre").Req("cpu", "4").Priority(10).Obj()
			pre.Status.NominatedNodeName = "n1"
			snap := api.Build(api.Objects{
				Nodes: []*corev1.Node{st.MakeNode("n1").Alloc("cpu", "4").Obj(), st.MakeNode("n2").Alloc("cpu", "4").Obj()},
				Pods: []*corev1.Pod{pre,
					st.MakePod("ns", "other").Req("cpu", "4").Annotation(schedulingv1beta1.QueueNameAnnotation, "other").Node("n2").Phase(corev1.PodRunning).Obj()},
				Queues: []*schedulingv1beta1.Queue{
					schedtesting.MakeQueue("default").Capability(schedtesting.Resources("cpu", "4")).Obj(),
					schedtesting.MakeQueue("other").Obj(),
				},
			})
			p, err := plugin(nil, &framework.Handle{})
			if err != nil {
				t.Fatal(err)
			}
			tiers := append(tiers(t), framework.Tier{Plugins: []framework.TierPlugin{{Plugin: p}}})
			r := &nominations{}
			ssn := framework.OpenSession(t.Context(), snap, tiers, framework.Options{Sink: r, Nominator: r})
			New().Execute(ssn)
			ssn.Close()
			if diff := cmp.Diff([]string{"pre->n1"}, r.binds); diff != "" {
				t.Errorf("binds (-want,+got):\n%s", diff)
			}
		})
	}
}
