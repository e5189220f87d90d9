package capacity

import (
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// workload is an entry of testdata/workloads.yaml.
type workload struct {
	Name           string `json:"name"`
	Benchmark      bool   `json:"benchmark"`
	Nodes          int    `json:"nodes"`
	NodeCPU        string `json:"nodeCPU"`
	TopQueues      int    `json:"topQueues"`
	ChildrenPerTop int    `json:"childrenPerTop"`
	LeavesPerChild int    `json:"leavesPerChild"`
	Jobs           int    `json:"jobs"`
	TasksPerJob    int    `json:"tasksPerJob"`
}

func loadWorkloads(t testing.TB) []workload {
	t.Helper()
	data, err := os.ReadFile("testdata/workloads.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []workload
	if err := yaml.UnmarshalStrict(data, &out); err != nil {
		t.Fatalf("testdata/workloads.yaml: %v", err)
	}
	return out
}

// objects builds the workload's nodes, queue tree and jobs; it returns the
// leaf queues too.
func (w workload) objects() (api.Objects, []string) {
	var o api.Objects
	for i := range w.Nodes {
		o.Nodes = append(o.Nodes, st.MakeNode(fmt.Sprintf("n%05d", i)).Alloc("cpu", w.NodeCPU, "memory", "256Gi").Obj())
	}
	total := resource.MustParse(w.NodeCPU)
	totalMilli := total.MilliValue() * int64(w.Nodes)
	queue := func(name, parent string, deservedMilli int64) {
		deserved := resource.NewMilliQuantity(deservedMilli, resource.DecimalSI)
		capability := resource.NewMilliQuantity(2*deservedMilli, resource.DecimalSI)
		guarantee := resource.NewMilliQuantity(deservedMilli/10, resource.DecimalSI)
		o.Queues = append(o.Queues, schedtesting.MakeQueue(name).Parent(parent).
			Deserved(corev1.ResourceList{corev1.ResourceCPU: *deserved}).
			Capability(corev1.ResourceList{corev1.ResourceCPU: *capability}).
			Guarantee(corev1.ResourceList{corev1.ResourceCPU: *guarantee}).Obj())
	}
	var leaves []string
	for i := range w.TopQueues {
		top := fmt.Sprintf("t%d", i)
		topMilli := totalMilli / int64(w.TopQueues)
		queue(top, "", topMilli)
		for j := range w.ChildrenPerTop {
			child := fmt.Sprintf("%s-c%d", top, j)
			childMilli := topMilli / int64(w.ChildrenPerTop)
			queue(child, top, childMilli)
			for k := range w.LeavesPerChild {
				leaf := fmt.Sprintf("%s-l%d", child, k)
				queue(leaf, child, childMilli/int64(w.LeavesPerChild))
				leaves = append(leaves, leaf)
			}
		}
	}
	for i := range w.Jobs {
		name := fmt.Sprintf("j%05d", i)
		leaf := leaves[i%len(leaves)]
		pg := schedtesting.MakePodGroup(name, "ns").Queue(leaf).MinMember(int32(w.TasksPerJob))
		if i%2 == 0 {
			pg.Phase(schedulingv1beta1.PodGroupRunning)
		} else {
			pg.Phase(schedulingv1beta1.PodGroupInqueue).MinResources(schedtesting.Resources("cpu", fmt.Sprint(w.TasksPerJob)))
		}
		o.PodGroups = append(o.PodGroups, pg.Obj())
		for k := range w.TasksPerJob {
			pod := st.MakePod("ns", fmt.Sprintf("%s-%d", name, k)).Group(name).Req("cpu", "1", "memory", "1Gi")
			if i%2 == 0 {
				pod.Node(fmt.Sprintf("n%05d", (i*w.TasksPerJob+k)%w.Nodes)).Phase(corev1.PodRunning)
			}
			o.Pods = append(o.Pods, pod.Obj())
		}
	}
	return o, leaves
}

// TestWorkloads checks what the plugin accounts for each queue of a
// workload against a sum over the jobs made independently, from the
// queues' spec.parent.
func TestWorkloads(t *testing.T) {
	for _, w := range loadWorkloads(t) {
		t.Run(w.Name, func(t *testing.T) {
			o, _ := w.objects()
			snap := api.Build(o)
			parent := map[api.QueueID]api.QueueID{}
			for _, q := range o.Queues {
				parent[api.QueueID(q.Name)] = api.QueueID(q.Spec.Parent)
			}
			type sums struct{ Allocated, Inqueue, Pending string }
			raw := map[api.QueueID]*[3]api.Resource{}
			for _, job := range snap.Jobs {
				for q := job.Queue; q != ""; q = parent[q] {
					if raw[q] == nil {
						raw[q] = &[3]api.Resource{}
					}
					raw[q][0].Add(job.Allocated)
					if job.Phase == schedulingv1beta1.PodGroupInqueue {
						raw[q][1].Add(job.MinResources)
						addPending(&raw[q][2], job)
					}
				}
			}
			want := map[api.QueueID]sums{}
			for q, r := range raw {
				want[q] = sums{r[0].String(), r[1].String(), r[2].String()}
			}

			p, err := New(nil, &framework.Handle{Hierarchy: true})
			if err != nil {
				t.Fatal(err)
			}
			plugin := p.(*Plugin)
			ssn := framework.OpenSession(t.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: plugin}}}}, framework.Options{})
			defer ssn.Close()
			got := map[api.QueueID]sums{}
			for id, a := range plugin.queues {
				if a != plugin.root {
					got[id] = sums{a.allocated.String(), a.inqueue.String(), a.pending.String()}
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("queue sums (-want,+got):\n%s", diff)
			}
		})
	}
}

// BenchmarkSessionOpen measures opening a session with the capacity plugin
// alone on the benchmark workloads of testdata/workloads.yaml.
func BenchmarkSessionOpen(b *testing.B) {
	for _, w := range loadWorkloads(b) {
		if !w.Benchmark {
			continue
		}
		o, _ := w.objects()
		b.Run(fmt.Sprintf("%s/queues=%d/jobs=%d", w.Name, len(o.Queues), w.Jobs), func(b *testing.B) {
			snap := api.Build(o)
			p, err := New(nil, &framework.Handle{Hierarchy: true})
			if err != nil {
				b.Fatal(err)
			}
			tiers := []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: p}}}}
			b.ReportAllocs()
			for b.Loop() {
				ssn := framework.OpenSession(b.Context(), snap, tiers, framework.Options{})
				ssn.Close()
			}
		})
	}
}
