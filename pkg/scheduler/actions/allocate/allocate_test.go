package allocate

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/priority"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

type recorder struct{ binds []string }

func (r *recorder) Bind(t *api.TaskInfo, node string) {
	r.binds = append(r.binds, t.Name+"->"+node)
}

func tiers(t *testing.T) []framework.Tier {
	t.Helper()
	g, err := gang.New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := priority.New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	return []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: p}, {Plugin: g}}}}
}

func nodes(n int, cpu string) []*corev1.Node {
	var out []*corev1.Node
	for i := range n {
		out = append(out, st.MakeNode(fmt.Sprintf("n%d", i)).Alloc("cpu", cpu, "memory", "16Gi").Obj())
	}
	return out
}

func gangPods(job string, n int, cpu string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, st.MakePod("ns", fmt.Sprintf("%s-%02d", job, i)).Group(job).Req("cpu", cpu).Obj())
	}
	return out
}

func TestAllocateGang(t *testing.T) {
	queues := []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}
	inqueue := func(name string, min int32) *schedulingv1beta1.PodGroup {
		return schedtesting.MakePodGroup(name, "ns").MinMember(min).Queue("default").Phase(schedulingv1beta1.PodGroupInqueue).Obj()
	}
	cases := map[string]struct {
		objects    api.Objects
		wantBinds  int
		wantReason map[api.JobID]string
	}{
		"10-pod gang on 9 free slots stays entirely pending": {
			objects: api.Objects{
				Nodes: nodes(3, "3"), Pods: gangPods("train", 10, "1"),
				PodGroups: []*schedulingv1beta1.PodGroup{inqueue("train", 10)}, Queues: queues,
			},
			wantReason: map[api.JobID]string{"ns/train": "NotEnoughResources: 9 of 10 tasks placeable, 10 needed together (minAvailable); task train-09: 0/3 nodes are available: 3 nodes Insufficient cpu"},
		},
		"10-pod gang on 12 free slots is placed whole": {
			objects: api.Objects{
				Nodes: nodes(4, "3"), Pods: gangPods("train", 10, "1"),
				PodGroups: []*schedulingv1beta1.PodGroup{inqueue("train", 10)}, Queues: queues,
			},
			wantBinds: 10,
		},
		"minAvailable below the pod count places what fits": {
			objects: api.Objects{
				Nodes: nodes(3, "3"), Pods: gangPods("train", 10, "1"),
				PodGroups: []*schedulingv1beta1.PodGroup{inqueue("train", 5)}, Queues: queues,
			},
			wantBinds:  9,
			wantReason: map[api.JobID]string{"ns/train": "NotEnoughResources: task train-09: 0/3 nodes are available: 3 nodes Insufficient cpu"},
		},
		"a job not yet admitted is not placed": {
			objects: api.Objects{
				Nodes: nodes(4, "3"), Pods: gangPods("train", 2, "1"),
				PodGroups: []*schedulingv1beta1.PodGroup{schedtesting.MakePodGroup("train", "ns").MinMember(2).Queue("default").Obj()},
				Queues:    queues,
			},
		},
		"a gang with fewer pods than its minimum is invalid": {
			objects: api.Objects{
				Nodes: nodes(4, "3"), Pods: gangPods("train", 2, "1"),
				PodGroups: []*schedulingv1beta1.PodGroup{inqueue("train", 3)}, Queues: queues,
			},
			wantReason: map[api.JobID]string{"ns/train": "NotEnoughPods: the job has 2 pods that can run, fewer than its minAvailable 3"},
		},
		"the first gang does not leave half a placement for the second": {
			objects: api.Objects{
				Nodes: nodes(2, "4"),
				Pods:  append(gangPods("a", 6, "1"), gangPods("b", 6, "1")...),
				PodGroups: []*schedulingv1beta1.PodGroup{
					inqueue("a", 6), inqueue("b", 6),
				},
				Queues: queues,
			},
			wantBinds: 6,
			wantReason: map[api.JobID]string{
				"ns/b": "NotEnoughResources: 2 of 6 tasks placeable, 6 needed together (minAvailable); task b-02: 0/2 nodes are available: 2 nodes Insufficient cpu",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := api.Build(tc.objects)
			rec := &recorder{}
			ssn := framework.OpenSession(t.Context(), snap, tiers(t), framework.Options{Now: time.Unix(0, 0), Sink: rec})
			New().Execute(ssn)
			ssn.Close()
			if got := len(rec.binds); got != tc.wantBinds {
				t.Errorf("binds = %d %v, want %d", got, rec.binds, tc.wantBinds)
			}
			got := map[api.JobID]string{}
			for id, o := range ssn.Outcomes() {
				if o.Unschedulable() != nil {
					got[id] = o.Unschedulable().String()
				}
			}
			if diff := cmp.Diff(tc.wantReason, got, cmpEmpty); diff != "" {
				t.Errorf("reasons (-want,+got):\n%s", diff)
			}
		})
	}
}

var cmpEmpty = cmp.FilterValues(func(a, b map[api.JobID]string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func TestAllocateIsDeterministic(t *testing.T) {
	objects := api.Objects{
		Nodes: nodes(5, "4"),
		Pods:  append(append(gangPods("a", 7, "1"), gangPods("b", 5, "2")...), gangPods("c", 3, "1")...),
		PodGroups: []*schedulingv1beta1.PodGroup{
			schedtesting.MakePodGroup("a", "ns").MinMember(7).Phase(schedulingv1beta1.PodGroupInqueue).Obj(),
			schedtesting.MakePodGroup("b", "ns").MinMember(5).Phase(schedulingv1beta1.PodGroupInqueue).Obj(),
			schedtesting.MakePodGroup("c", "ns").MinMember(3).Phase(schedulingv1beta1.PodGroupInqueue).Obj(),
		},
		Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()},
	}
	var first []string
	for i := range 20 {
		rec := &recorder{}
		ssn := framework.OpenSession(t.Context(), api.Build(objects), tiers(t), framework.Options{Sink: rec})
		New().Execute(ssn)
		ssn.Close()
		slices.Sort(rec.binds)
		if i == 0 {
			first = rec.binds
			continue
		}
		if diff := cmp.Diff(first, rec.binds); diff != "" {
			t.Fatalf("run %d differs from run 0 (-first,+this):\n%s", i, diff)
		}
	}
	if !strings.Contains(strings.Join(first, ","), "a-00") {
		t.Errorf("expected gang a to be placed: %v", first)
	}
}

// TestTaskMinimumBelowTheGangIsNotRunning: a gang of minMember 2 whose
// one task needs all 4 of its pods together, with room for 2, holds
// nothing, says which minimum is short, and its PodGroup never claims
// Running.
func TestTaskMinimumBelowTheGangIsNotRunning(t *testing.T) {
	var pods []*corev1.Pod
	for i := range 4 {
		pods = append(pods, st.MakePod("ns", fmt.Sprintf("job-w-%d", i)).Group("job").Role("w").Req("cpu", "1").Obj())
	}
	pg := schedtesting.MakePodGroup("job", "ns").MinMember(2).MinTaskMember("w", 4).Queue("default").Phase(schedulingv1beta1.PodGroupInqueue).Obj()
	snap := api.Build(api.Objects{Nodes: nodes(1, "2"), Pods: pods, PodGroups: []*schedulingv1beta1.PodGroup{pg},
		Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}})
	rec := &recorder{}
	ssn := framework.OpenSession(t.Context(), snap, tiers(t), framework.Options{Now: time.Unix(0, 0), Sink: rec})
	New().Execute(ssn)
	job := snap.Jobs["ns/job"]
	if phase := framework.JobPhase(job); phase == schedulingv1beta1.PodGroupRunning {
		t.Errorf("phase %s with %d tasks placed", phase, job.PlacedCount())
	}
	ssn.Close()
	if len(rec.binds) != 0 {
		t.Errorf("bound %v", rec.binds)
	}
	o := ssn.Outcomes()["ns/job"]
	if o == nil || o.Unschedulable() == nil {
		t.Fatal("no reason given")
	}
	if got, want := o.Unschedulable().String(), "NotEnoughResources: 2 of 4 tasks placeable, task w needs 4 together (minAvailable of the task), 2 placeable; task job-w-2: 0/1 nodes are available: 1 node Insufficient cpu"; got != want {
		t.Errorf("reason %q", got)
	}
}

// TestAllocateStopsWhenOutOfTime: a cycle that runs out of time finishes
// the job it is placing, leaves the others untried (no outcome, so their
// status stays as it was) and says it was cut; the next cycle places them.
func TestAllocateStopsWhenOutOfTime(t *testing.T) {
	var pods []*corev1.Pod
	var pgs []*schedulingv1beta1.PodGroup
	for _, job := range []string{"a", "b", "c"} {
		pods = append(pods, gangPods(job, 2, "1")...)
		pgs = append(pgs, schedtesting.MakePodGroup(job, "ns").MinMember(2).Phase(schedulingv1beta1.PodGroupInqueue).Obj())
	}
	objects := api.Objects{Nodes: nodes(2, "4"), Pods: pods, PodGroups: pgs, Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}}

	asked := 0
	rec := &recorder{}
	ssn := framework.OpenSession(t.Context(), api.Build(objects), tiers(t), framework.Options{Sink: rec,
		// Time runs out once the first job is tried.
		OutOfTime: func() bool { asked++; return asked > 1 }})
	New().Execute(ssn)
	ssn.Close()
	if len(rec.binds) != 2 {
		t.Fatalf("out of time after one job: placed %v, want one whole gang of 2", rec.binds)
	}
	if !ssn.Cut() {
		t.Errorf("the cycle left jobs untried but does not say it was cut")
	}
	if n := len(ssn.Outcomes()); n > 1 {
		t.Errorf("%d jobs have an outcome, want only the one tried: %v", n, ssn.Outcomes())
	}

	rec = &recorder{}
	ssn = framework.OpenSession(t.Context(), api.Build(objects), tiers(t), framework.Options{Sink: rec, OutOfTime: func() bool { return false }})
	New().Execute(ssn)
	ssn.Close()
	if len(rec.binds) != 6 || ssn.Cut() {
		t.Errorf("with time enough: placed %v, cut %v; want all 6 and not cut", rec.binds, ssn.Cut())
	}
}
