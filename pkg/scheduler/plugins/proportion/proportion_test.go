package proportion

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/enqueue"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/drf"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/priority"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

type perQueue struct {
	snap  *api.Snapshot
	count map[api.QueueID]int
}

func (r *perQueue) Bind(t *api.TaskInfo, _ string) { r.count[r.snap.Jobs[t.Job].Queue]++ }

func plugin(t *testing.T, f framework.PluginFactory) framework.TierPlugin {
	t.Helper()
	p, err := f(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	return framework.TierPlugin{Plugin: p}
}

func tiers(t *testing.T) []framework.Tier {
	return []framework.Tier{
		{Plugins: []framework.TierPlugin{plugin(t, priority.New), plugin(t, gang.New)}},
		{Plugins: []framework.TierPlugin{plugin(t, drf.New), plugin(t, New)}},
	}
}

func singlePods(queue string, n int) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, st.MakePod("ns", fmt.Sprintf("%s-%03d", queue, i)).Req("cpu", "1").
			Annotation(schedulingv1beta1.QueueNameAnnotation, queue).Obj())
	}
	return out
}

func cluster(nodes int, cpu string) []*corev1.Node {
	var out []*corev1.Node
	for i := range nodes {
		out = append(out, st.MakeNode(fmt.Sprintf("n%d", i)).Alloc("cpu", cpu, "memory", "64Gi").Obj())
	}
	return out
}

func cpu(v string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
}

func TestQueuesShareByWeight(t *testing.T) {
	cases := map[string]struct {
		queues []*schedulingv1beta1.Queue
		want   map[api.QueueID]int
	}{
		"3:1 weights get 3:1": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Weight(3).Obj(), schedtesting.MakeQueue("b").Weight(1).Obj(),
			},
			want: map[api.QueueID]int{"a": 30, "b": 10},
		},
		"a capability caps a queue and its sibling gets the rest": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Weight(3).Capability(cpu("20")).Obj(), schedtesting.MakeQueue("b").Weight(1).Obj(),
			},
			want: map[api.QueueID]int{"a": 20, "b": 20},
		},
		"an idle sibling's share is lent out": {
			queues: []*schedulingv1beta1.Queue{
				schedtesting.MakeQueue("a").Weight(1).Obj(), schedtesting.MakeQueue("idle").Weight(1).Obj(),
			},
			want: map[api.QueueID]int{"a": 40},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pods := append(singlePods("a", 50), singlePods("b", 50)...)
			snap := api.Build(api.Objects{Nodes: cluster(4, "10"), Pods: pods, Queues: tc.queues})
			if _, ok := snap.Queues["b"]; !ok {
				for id, j := range snap.Jobs {
					if j.Queue == "b" {
						delete(snap.Jobs, id)
					}
				}
			}
			rec := &perQueue{snap: snap, count: map[api.QueueID]int{}}
			ssn := framework.OpenSession(t.Context(), snap, tiers(t), framework.Options{Sink: rec})
			allocate.New().Execute(ssn)
			ssn.Close()
			if diff := cmp.Diff(tc.want, rec.count); diff != "" {
				t.Errorf("placed per queue (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestEnqueueRespectsCapability(t *testing.T) {
	pg := func(name, queue, minCPU string) *schedulingv1beta1.PodGroup {
		return schedtesting.MakePodGroup(name, "ns").MinMember(1).Queue(queue).MinResources(cpu(minCPU)).Obj()
	}
	snap := api.Build(api.Objects{
		Nodes:     cluster(4, "10"),
		Queues:    []*schedulingv1beta1.Queue{schedtesting.MakeQueue("a").Capability(cpu("10")).Obj()},
		PodGroups: []*schedulingv1beta1.PodGroup{pg("first", "a", "6"), pg("second", "a", "6")},
	})
	ssn := framework.OpenSession(t.Context(), snap, tiers(t), framework.Options{})
	enqueue.New().Execute(ssn)
	ssn.Close()
	admitted := 0
	for _, o := range ssn.Outcomes() {
		if o.Enqueued {
			admitted++
		}
	}
	if admitted != 1 {
		t.Errorf("admitted %d jobs, want 1 (two 6-cpu minimums exceed the 10-cpu capability)", admitted)
	}
	second := ssn.Outcomes()["ns/second"]
	if second == nil || second.Unschedulable() == nil || second.Unschedulable().Type != "QueueCapabilityExceeded" {
		t.Fatalf("second job's outcome = %+v, want QueueCapabilityExceeded", second)
	}
	want := "queue a cannot admit the job: its minimum (cpu 6) with the queue's allocated (none) and admitted (cpu 6) resources exceeds what the queue may hold (cpu 10, memory 256Gi) in [cpu]"
	if got := second.Unschedulable().Message; got != want {
		t.Errorf("reason:\n got %s\nwant %s", got, want)
	}
}

// TestAResourceNoNodeHasIsSaid: a job asking for a resource no node has
// waits for that, not for its queue's capability.
func TestAResourceNoNodeHasIsSaid(t *testing.T) {
	min := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), "volcano.sh/gpu-memory": resource.MustParse("4000")}
	snap := api.Build(api.Objects{
		Nodes:     cluster(2, "10"),
		Queues:    []*schedulingv1beta1.Queue{schedtesting.MakeQueue("a").Obj()},
		PodGroups: []*schedulingv1beta1.PodGroup{schedtesting.MakePodGroup("shared", "ns").MinMember(1).Queue("a").MinResources(min).Obj()},
	})
	ssn := framework.OpenSession(t.Context(), snap, tiers(t), framework.Options{})
	enqueue.New().Execute(ssn)
	ssn.Close()
	o := ssn.Outcomes()["ns/shared"]
	if o == nil || o.Unschedulable() == nil {
		t.Fatalf("outcome %+v, want a reason", o)
	}
	if got, want := o.Unschedulable().String(), "NoNodeHasResource: no node has volcano.sh/gpu-memory, which the job's minimum (cpu 1, volcano.sh/gpu-memory 4k) asks for"; got != want {
		t.Errorf("reason:\n got %s\nwant %s", got, want)
	}
}
