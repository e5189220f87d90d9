package reclaim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework/frameworktest"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/capacity"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/conformance"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/priority"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/proportion"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// sharing names the queue-sharing plugin a case runs with.
type sharing int

const (
	flatCapacity sharing = iota
	hierarchicalCapacity
	proportional
)

func tiers(t *testing.T, s sharing) []framework.Tier {
	t.Helper()
	var queuePlugin framework.Plugin
	var err error
	switch s {
	case flatCapacity:
		queuePlugin, err = capacity.New(nil, &framework.Handle{})
	case hierarchicalCapacity:
		queuePlugin, err = capacity.New(nil, &framework.Handle{Hierarchy: true})
	case proportional:
		queuePlugin, err = proportion.New(nil, &framework.Handle{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return []framework.Tier{
		frameworktest.Tier(t, nil, priority.New, gang.New, conformance.New),
		{Plugins: []framework.TierPlugin{{Plugin: queuePlugin}}},
	}
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// running is a 2-CPU pod of queue q on node, started minute minutes after
// the epoch (later pods are younger).
func running(name, q, node string, minute int) *corev1.Pod {
	return st.MakePod("ns", name).Req("cpu", "2").Annotation(schedulingv1beta1.QueueNameAnnotation, q).
		Created(metav1.NewTime(epoch.Add(time.Duration(minute) * time.Minute))).Node(node).Phase(corev1.PodRunning).Obj()
}

// pending is a pending 2-CPU pod of queue q.
func pending(name, q string) *corev1.Pod {
	return st.MakePod("ns", name).Req("cpu", "2").Annotation(schedulingv1beta1.QueueNameAnnotation, q).
		Created(metav1.NewTime(epoch.Add(time.Hour))).Obj()
}

func nodes(n int) []*corev1.Node {
	var out []*corev1.Node
	for i := range n {
		out = append(out, st.MakeNode("n"+string(rune('1'+i))).Alloc("cpu", "4").Obj())
	}
	return out
}

func cpu(v string) corev1.ResourceList { return schedtesting.Resources("cpu", v) }

func run(t *testing.T, s sharing, o api.Objects) *frameworktest.Recorder {
	t.Helper()
	return frameworktest.Run(t, api.Build(o), tiers(t, s), framework.Options{}, New(nil))
}

func TestReclaim(t *testing.T) {
	cases := map[string]struct {
		sharing sharing
		objects api.Objects
		want    []string
	}{
		"a queue below its deserved share takes back the youngest pod of its borrowing sibling": {
			objects: api.Objects{
				Nodes: nodes(2),
				Queues: []*schedulingv1beta1.Queue{
					schedtesting.MakeQueue("a").Deserved(cpu("4")).Obj(),
					schedtesting.MakeQueue("b").Deserved(cpu("4")).Obj(),
				},
				Pods: []*corev1.Pod{
					running("b-0", "b", "n1", 0), running("b-1", "b", "n1", 1),
					running("b-2", "b", "n2", 2), running("b-3", "b", "n2", 3),
					pending("a-0", "a"),
				},
			},
			want: []string{"b-3"},
		},
		"a gang that would take its queue beyond its deserved share reclaims nothing": {
			objects: api.Objects{
				Nodes: nodes(2),
				Queues: []*schedulingv1beta1.Queue{
					schedtesting.MakeQueue("a").Deserved(cpu("4")).Obj(),
					schedtesting.MakeQueue("b").Deserved(cpu("4")).Obj(),
				},
				PodGroups: []*schedulingv1beta1.PodGroup{
					schedtesting.MakePodGroup("big", "ns").Queue("a").MinMember(3).Phase(schedulingv1beta1.PodGroupInqueue).Obj(),
				},
				Pods: []*corev1.Pod{
					running("b-0", "b", "n1", 0), running("b-1", "b", "n1", 1),
					running("b-2", "b", "n2", 2), running("b-3", "b", "n2", 3),
					st.MakePod("ns", "big-0").Group("big").Req("cpu", "2").Obj(),
					st.MakePod("ns", "big-1").Group("big").Req("cpu", "2").Obj(),
					st.MakePod("ns", "big-2").Group("big").Req("cpu", "2").Obj(),
				},
			},
		},
		"a queue at its guarantee keeps it: of two reclaimers only one is served": {
			objects: api.Objects{
				Nodes: nodes(2),
				Queues: []*schedulingv1beta1.Queue{
					schedtesting.MakeQueue("a").Deserved(cpu("2")).Obj(),
					schedtesting.MakeQueue("c").Deserved(cpu("2")).Obj(),
					schedtesting.MakeQueue("b").Guarantee(cpu("6")).Obj(),
				},
				Pods: []*corev1.Pod{
					running("b-0", "b", "n1", 0), running("b-1", "b", "n1", 1),
					running("b-2", "b", "n2", 2), running("b-3", "b", "n2", 3),
					pending("a-0", "a"), pending("c-0", "c"),
				},
			},
			want: []string{"b-3"},
		},
		"a queue that is not reclaimable gives nothing back": {
			objects: api.Objects{
				Nodes: nodes(2),
				Queues: []*schedulingv1beta1.Queue{
					schedtesting.MakeQueue("a").Deserved(cpu("4")).Obj(),
					schedtesting.MakeQueue("b").Deserved(cpu("4")).Reclaimable(false).Obj(),
				},
				Pods: []*corev1.Pod{
					running("b-0", "b", "n1", 0), running("b-1", "b", "n1", 1),
					running("b-2", "b", "n2", 2), running("b-3", "b", "n2", 3),
					pending("a-0", "a"),
				},
			},
		},
		"a queue that deserves nothing reclaims nothing": {
			objects: api.Objects{
				Nodes: nodes(2),
				Queues: []*schedulingv1beta1.Queue{
					schedtesting.MakeQueue("a").Obj(),
					schedtesting.MakeQueue("b").Deserved(cpu("4")).Obj(),
				},
				Pods: []*corev1.Pod{
					running("b-0", "b", "n1", 0), running("b-1", "b", "n1", 1),
					running("b-2", "b", "n2", 2), running("b-3", "b", "n2", 3),
					pending("a-0", "a"),
				},
			},
		},
		"a sibling gives back before a cousin": {
			sharing: hierarchicalCapacity,
			objects: api.Objects{
				Nodes:  nodes(4),
				Queues: tree("8", "4", "4", "4", "4"),
				Pods: []*corev1.Pod{
					running("a2-0", "team-a2", "n1", 0), running("a2-1", "team-a2", "n1", 1),
					running("a2-2", "team-a2", "n2", 2), running("b1-0", "team-b1", "n2", 3),
					running("b1-1", "team-b1", "n3", 4), running("b1-2", "team-b1", "n3", 5),
					running("b1-3", "team-b1", "n4", 6), running("b1-4", "team-b1", "n4", 7),
					pending("a1-0", "team-a1"),
				},
			},
			want: []string{"a2-2"},
		},
		"a cousin gives back when the sibling holds only its share": {
			sharing: hierarchicalCapacity,
			objects: api.Objects{
				Nodes:  nodes(4),
				Queues: tree("8", "4", "4", "4", "4"),
				Pods: []*corev1.Pod{
					running("a2-0", "team-a2", "n1", 0), running("a2-1", "team-a2", "n1", 1),
					running("b1-0", "team-b1", "n2", 2), running("b1-1", "team-b1", "n2", 3),
					running("b1-2", "team-b1", "n3", 4), running("b1-3", "team-b1", "n3", 5),
					running("b1-4", "team-b1", "n4", 6), running("b1-5", "team-b1", "n4", 7),
					pending("a1-0", "team-a1"),
				},
			},
			want: []string{"b1-5"},
		},
		"in a department at its share the borrowing sibling gives back, not the cousin": {
			sharing: hierarchicalCapacity,
			objects: api.Objects{
				Nodes: nodes(4),
				// dept-a holds its 8, team-a2 twice its share; dept-b holds
				// its 8, so its team-b1, above its own 4, gives nothing.
				Queues: tree("8", "4", "4", "8", "4"),
				Pods: []*corev1.Pod{
					running("a2-0", "team-a2", "n1", 0), running("a2-1", "team-a2", "n1", 1),
					running("a2-2", "team-a2", "n2", 2), running("a2-3", "team-a2", "n2", 3),
					running("b1-0", "team-b1", "n3", 4), running("b1-1", "team-b1", "n3", 5),
					running("b1-2", "team-b1", "n4", 6), running("b1-3", "team-b1", "n4", 7),
					pending("a1-0", "team-a1"),
				},
			},
			want: []string{"a2-3"},
		},
		"proportion: the queue under its weighted share takes back from the one above": {
			sharing: proportional,
			objects: api.Objects{
				Nodes: nodes(2),
				Queues: []*schedulingv1beta1.Queue{
					schedtesting.MakeQueue("a").Weight(1).Obj(),
					schedtesting.MakeQueue("b").Weight(1).Obj(),
				},
				Pods: []*corev1.Pod{
					running("b-0", "b", "n1", 0), running("b-1", "b", "n1", 1),
					running("b-2", "b", "n2", 2), running("b-3", "b", "n2", 3),
					pending("a-0", "a"), pending("a-1", "a"),
				},
			},
			want: []string{"b-2", "b-3"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, tc.sharing, tc.objects)
			if diff := cmp.Diff(tc.want, r.Evictions); diff != "" {
				t.Errorf("evictions (-want,+got):\n%s", diff)
			}
		})
	}
}

// tree is two departments of 16 CPUs: dept-a (team-a1, team-a2) and dept-b
// (team-b1), with the given deserved CPUs.
func tree(deptA, a1, a2, deptB, b1 string) []*schedulingv1beta1.Queue {
	return []*schedulingv1beta1.Queue{
		schedtesting.MakeQueue("dept-a").Deserved(cpu(deptA)).Obj(),
		schedtesting.MakeQueue("team-a1").Parent("dept-a").Deserved(cpu(a1)).Obj(),
		schedtesting.MakeQueue("team-a2").Parent("dept-a").Deserved(cpu(a2)).Obj(),
		schedtesting.MakeQueue("dept-b").Deserved(cpu(deptB)).Obj(),
		schedtesting.MakeQueue("team-b1").Parent("dept-b").Deserved(cpu(b1)).Obj(),
	}
}

// TestNoTakingBack: a job whose pod was just evicted for another job does
// not take the room back from that job, though the queues' shares would
// let it; once the window has passed it may.
func TestNoTakingBack(t *testing.T) {
	now := epoch.Add(2 * time.Hour)
	objects := func() api.Objects {
		return api.Objects{
			Nodes: nodes(1),
			Queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Deserved(cpu("2")).Obj(),
				schedtesting.MakeQueue("b").Deserved(cpu("2")).Obj(),
			},
			PodGroups: []*schedulingv1beta1.PodGroup{
				schedtesting.MakePodGroup("bj", "ns").Queue("b").MinMember(1).Phase(schedulingv1beta1.PodGroupRunning).Obj(),
			},
			Pods: []*corev1.Pod{
				st.MakePod("ns", "b-0").Group("bj").Req("cpu", "2").Created(metav1.NewTime(epoch)).Node("n1").Phase(corev1.PodRunning).Obj(),
				st.MakePod("ns", "b-1").Group("bj").Req("cpu", "2").Created(metav1.NewTime(epoch.Add(time.Minute))).Node("n1").Phase(corev1.PodRunning).Obj(),
				pending("a-0", "a"),
			},
		}
	}
	for name, tc := range map[string]struct {
		ago  time.Duration
		want []string
	}{
		"within the window": {ago: time.Minute},
		"after the window":  {ago: framework.ReEvictionWindow + time.Second, want: []string{"b-1"}},
	} {
		t.Run(name, func(t *testing.T) {
			o := objects()
			snap := api.Build(o)
			reclaimer := snap.Jobs[api.JobIDOfPod(o.Pods[2])]
			reclaimer.EvictedBy = map[api.JobID]time.Time{api.NewJobID("ns", "bj"): now.Add(-tc.ago)}
			r := frameworktest.Run(t, snap, tiers(t, flatCapacity), framework.Options{Now: now}, New(nil))
			if diff := cmp.Diff(tc.want, r.Evictions); diff != "" {
				t.Errorf("evictions (-want,+got):\n%s", diff)
			}
		})
	}
}
