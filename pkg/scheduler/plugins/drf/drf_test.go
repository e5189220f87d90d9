package drf

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

const gpu = "nvidia.com/gpu"

// cluster is n0, where the running pods are, and n1, where pods are
// placed in the cycle: 20 CPUs, 80Gi and 4 GPUs in all.
func cluster() []*corev1.Node {
	return []*corev1.Node{
		st.MakeNode("n0").Alloc("cpu", "16", "memory", "64Gi", gpu, "4").Obj(),
		st.MakeNode("n1").Alloc("cpu", "4", "memory", "16Gi").Obj(),
	}
}

// running is a pod of the job (PodGroup) ns/job running on n0.
func running(ns, job, name string, req ...string) *corev1.Pod {
	return st.MakePod(ns, name).Group(job).Req(req...).Node("n0").Phase(corev1.PodRunning).Obj()
}

// pending is a pod of the job ns/job waiting for a node.
func pending(ns, job, name string, req ...string) *corev1.Pod {
	return st.MakePod(ns, name).Group(job).Req(req...).Obj()
}

// pipelined is a pod of the job ns/job nominated for n1: it claims room
// there that is being freed.
func pipelined(ns, job, name string, req ...string) *corev1.Pod {
	p := pending(ns, job, name, req...)
	p.Status.NominatedNodeName = "n1"
	return p
}

// session opens a cycle of the cluster with the pods, each job's PodGroup
// admitted, and the plugin alone; it is closed when the test ends.
func session(t *testing.T, pods []*corev1.Pod) (*Plugin, *framework.Session) {
	t.Helper()
	var pgs []*schedulingv1beta1.PodGroup
	seen := map[api.JobID]bool{}
	for _, pod := range pods {
		name := pod.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]
		if id := api.NewJobID(pod.Namespace, name); !seen[id] {
			seen[id] = true
			pgs = append(pgs, schedtesting.MakePodGroup(name, pod.Namespace).MinMember(1).Phase(schedulingv1beta1.PodGroupRunning).Obj())
		}
	}
	snap := api.Build(api.Objects{Nodes: cluster(), Pods: pods, PodGroups: pgs})
	p, err := New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	ssn := framework.OpenSession(t.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: p}}}}, framework.Options{})
	t.Cleanup(ssn.Close)
	return p.(*Plugin), ssn
}

// place allocates the named pending pods on n1 in a statement of the
// session, as an action does; the statement is returned open.
func place(t *testing.T, ssn *framework.Session, names ...string) *framework.Statement {
	t.Helper()
	stmt := ssn.NewStatement()
	for _, name := range names {
		var task *api.TaskInfo
		for _, j := range ssn.Snapshot.Jobs {
			for _, tk := range j.Tasks {
				if tk.Name == name {
					task = tk
				}
			}
		}
		if task == nil {
			t.Fatalf("no task %s", name)
		}
		if err := stmt.Allocate(task, ssn.Snapshot.Nodes["n1"]); err != nil {
			t.Fatal(err)
		}
	}
	return stmt
}

func TestJobOrderByDominantShare(t *testing.T) {
	cases := map[string]struct {
		pods []*corev1.Pod
		// place are pending pods placed in the cycle before the order is
		// asked.
		place []string
		// want are the jobs' names, first first.
		want []string
	}{
		"the largest fraction of any one resource decides, not their sum": {
			pods: []*corev1.Pod{
				// 10% of the CPUs, 40% of the memory: 0.4.
				running("ns", "memory-heavy", "m", "cpu", "2", "memory", "32Gi"),
				// 30% of the CPUs, 10% of the memory: 0.3.
				running("ns", "cpu-heavy", "c", "cpu", "6", "memory", "8Gi"),
				// 35% of the CPUs, 30% of the memory: 0.35.
				running("ns", "balanced", "b", "cpu", "7", "memory", "24Gi"),
			},
			want: []string{"cpu-heavy", "balanced", "memory-heavy"},
		},
		"an extended resource counts like the others": {
			pods: []*corev1.Pod{
				// One of 4 GPUs: 0.25.
				running("ns", "one-gpu", "g", "cpu", "1", "memory", "1Gi", gpu, "1"),
				running("ns", "cpu-heavy", "c", "cpu", "6", "memory", "8Gi"),
				running("ns", "two-gpus", "gg", "cpu", "1", "memory", "1Gi", gpu, "2"),
			},
			want: []string{"one-gpu", "cpu-heavy", "two-gpus"},
		},
		"a resource the cluster does not have makes the share whole": {
			pods: []*corev1.Pod{
				running("ns", "fpga", "f", "cpu", "1", "example.com/fpga", "1"),
				running("ns", "most-cpus", "c", "cpu", "9"),
			},
			want: []string{"most-cpus", "fpga"},
		},
		"pending pods hold nothing; pipelined pods hold the room they claim": {
			pods: []*corev1.Pod{
				running("ns", "small", "s", "cpu", "2"),
				pending("ns", "waiting", "w", "cpu", "16"),
				pipelined("ns", "claiming", "p", "cpu", "4"),
			},
			want: []string{"waiting", "small", "claiming"},
		},
		"a placement in the cycle counts for its job": {
			pods: []*corev1.Pod{
				running("ns", "a", "a-0", "cpu", "2"),
				running("ns", "b", "b-0", "cpu", "3"),
				pending("ns", "a", "a-1", "cpu", "2"),
			},
			place: []string{"a-1"},
			want:  []string{"b", "a"},
		},
		"equal shares: no opinion, the creation time and the name decide": {
			pods: []*corev1.Pod{
				running("ns", "y", "y-0", "memory", "8Gi"),
				running("ns", "x", "x-0", "cpu", "2"),
				running("ns", "z", "z-0", "cpu", "2", "memory", "8Gi"),
			},
			want: []string{"x", "y", "z"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, ssn := session(t, tc.pods)
			place(t, ssn, tc.place...)
			jobs := ssn.Snapshot.JobList()
			ssn.SortJobs(jobs)
			var got []string
			for _, j := range jobs {
				got = append(got, j.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("job order (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNamespaceOrderFollowsTheCycle(t *testing.T) {
	// Namespace a holds 6 CPUs, b 4, c nothing; b has a pending 4-CPU pod.
	pods := func() []*corev1.Pod {
		return []*corev1.Pod{
			running("a", "j", "a-0", "cpu", "4"), running("a", "k", "a-1", "cpu", "2"),
			running("b", "j", "b-0", "cpu", "4"), pending("b", "j", "b-1", "cpu", "4"),
			pending("c", "j", "c-0", "cpu", "1"),
		}
	}
	cases := map[string]struct {
		place   []string
		discard bool
		want    []string
	}{
		"by the namespaces' shares as the cycle began": {
			want: []string{"c", "b", "a"},
		},
		"a placement in the cycle counts for its namespace": {
			place: []string{"b-1"},
			want:  []string{"c", "a", "b"},
		},
		"a placement undone no longer counts": {
			place:   []string{"b-1"},
			discard: true,
			want:    []string{"c", "b", "a"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, ssn := session(t, pods())
			stmt := place(t, ssn, tc.place...)
			if tc.discard {
				stmt.Discard()
			}
			got := []string{"a", "b", "c"}
			slices.SortStableFunc(got, p.NamespaceOrder)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("namespace order (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNewTakesNoArguments(t *testing.T) {
	_, err := New(struct{}{}, &framework.Handle{})
	if err == nil || !strings.Contains(err.Error(), Name) {
		t.Errorf("New with arguments: err = %v, want one naming the plugin", err)
	}
}
