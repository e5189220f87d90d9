package gang

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// task is one pod of a test job: its role (volcano.sh/task-spec), the
// value of its "part" label (which sub-group policies split on; "" for
// none) and where it stands.
type task struct {
	role, part string
	status     api.TaskStatus
}

func tasks(status ...api.TaskStatus) []task {
	out := make([]task, len(status))
	for i, s := range status {
		out[i] = task{status: s}
	}
	return out
}

// open builds the jobs of the PodGroups, each with its tasks, as the
// scheduler's snapshot holds them, and opens a session with the plugin
// alone, closed when the test ends.
func open(t *testing.T, jobs map[*schedulingv1beta1.PodGroup][]task) (*Plugin, map[string]*api.JobInfo) {
	t.Helper()
	var pgs []*schedulingv1beta1.PodGroup
	var pods []*corev1.Pod
	status := map[api.TaskID]api.TaskStatus{}
	for pg, ts := range jobs {
		pgs = append(pgs, pg)
		for i, tk := range ts {
			p := st.MakePod(pg.Namespace, fmt.Sprintf("%s-%d", pg.Name, i)).Group(pg.Name).Req("cpu", "1")
			if tk.role != "" {
				p.Role(tk.role)
			}
			if tk.part != "" {
				p.Label("part", tk.part)
			}
			pods = append(pods, p.Obj())
			status[p.UID] = tk.status
		}
	}
	snap := api.Build(api.Objects{PodGroups: pgs, Pods: pods})
	out := map[string]*api.JobInfo{}
	for _, j := range snap.Jobs {
		for _, tk := range j.Tasks {
			j.SetTaskStatus(tk, status[tk.UID])
		}
		out[j.Name] = j
	}
	p, err := New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	ssn := framework.OpenSession(t.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: p}}}}, framework.Options{})
	t.Cleanup(ssn.Close)
	return p.(*Plugin), out
}

// verdict is what the plugin says of one job.
type verdict struct {
	// Invalid is JobValid's objection, "Type: message"; "" when valid.
	Invalid   string
	Ready     bool
	Pipelined framework.Vote
	Starving  bool
}

func TestGangVerdicts(t *testing.T) {
	pg := func(min int32) *schedtesting.PodGroupWrapper {
		return schedtesting.MakePodGroup("j", "ns").MinMember(min).Phase(schedulingv1beta1.PodGroupInqueue)
	}
	parts := func(minSubGroups int32) schedulingv1beta1.SubGroupPolicySpec {
		return schedulingv1beta1.SubGroupPolicySpec{Name: "part", MatchLabelKeys: []string{"part"}, SubGroupSize: new(int32(2)), MinSubGroups: new(minSubGroups)}
	}
	cases := map[string]struct {
		pg    *schedulingv1beta1.PodGroup
		tasks []task
		want  verdict
	}{
		"the whole gang running": {
			pg:    pg(3).Obj(),
			tasks: tasks(api.Running, api.Running, api.Running),
			want:  verdict{Ready: true, Pipelined: framework.Permit},
		},
		"placed in the cycle, bound and succeeded tasks all make up the gang": {
			pg:    pg(3).Obj(),
			tasks: tasks(api.Allocated, api.Bound, api.Succeeded),
			want:  verdict{Ready: true, Pipelined: framework.Permit},
		},
		"tasks beyond the gang may wait": {
			pg:    pg(2).Obj(),
			tasks: tasks(api.Running, api.Running, api.Pending, api.Pending),
			want:  verdict{Ready: true, Pipelined: framework.Permit},
		},
		"one short of the gang": {
			pg:    pg(3).Obj(),
			tasks: tasks(api.Running, api.Allocated, api.Pending),
			want:  verdict{Pipelined: framework.Reject, Starving: true},
		},
		"a pipelined task completes the gang for holding room, not for starting": {
			pg:    pg(3).Obj(),
			tasks: tasks(api.Running, api.Running, api.Pipelined),
			want:  verdict{Pipelined: framework.Permit},
		},
		"failed, unknown and releasing pods cannot run: too few left for the gang": {
			pg:    pg(4).Obj(),
			tasks: tasks(api.Running, api.Running, api.Pending, api.Failed, api.Unknown, api.Releasing),
			want: verdict{
				Invalid:   "NotEnoughPods: the job has 3 pods that can run, fewer than its minAvailable 4",
				Pipelined: framework.Reject, Starving: true,
			},
		},
		"a job with fewer pods than its gang is invalid": {
			pg:    pg(3).Obj(),
			tasks: tasks(api.Running, api.Failed, api.Pending),
			want: verdict{
				Invalid:   "NotEnoughPods: the job has 2 pods that can run, fewer than its minAvailable 3",
				Pipelined: framework.Reject, Starving: true,
			},
		},
		"every role's minimum placed": {
			pg:    pg(3).MinTaskMember("ps", 1).MinTaskMember("worker", 2).Obj(),
			tasks: []task{{role: "ps", status: api.Running}, {role: "worker", status: api.Running}, {role: "worker", status: api.Bound}},
			want:  verdict{Ready: true, Pipelined: framework.Permit},
		},
		"the gang's size placed, but not a role's minimum": {
			pg: pg(2).MinTaskMember("worker", 2).Obj(),
			tasks: []task{
				{role: "ps", status: api.Running}, {role: "worker", status: api.Running}, {role: "worker", status: api.Pending},
			},
			want: verdict{Pipelined: framework.Reject, Starving: true},
		},
		"a role's minimum completed by a pipelined task: pipelined, not ready": {
			pg: pg(3).MinTaskMember("worker", 2).Obj(),
			tasks: []task{
				{role: "ps", status: api.Running}, {role: "worker", status: api.Running}, {role: "worker", status: api.Pipelined},
			},
			want: verdict{Pipelined: framework.Permit},
		},
		"a role with too few pods that can run is invalid, though the job has enough": {
			pg: pg(3).MinTaskMember("ps", 1).MinTaskMember("worker", 2).Obj(),
			tasks: []task{
				{role: "ps", status: api.Running}, {role: "ps", status: api.Pending},
				{role: "worker", status: api.Running}, {role: "worker", status: api.Failed},
			},
			want: verdict{
				Invalid:   "NotEnoughPods: task worker has 1 pods that can run, fewer than its minAvailable 2",
				Pipelined: framework.Reject, Starving: true,
			},
		},
		"enough whole sub-groups placed": {
			pg: pg(4).SubGroupPolicy(parts(2)).Obj(),
			tasks: []task{
				{part: "a", status: api.Running}, {part: "a", status: api.Running},
				{part: "b", status: api.Running}, {part: "b", status: api.Allocated},
			},
			want: verdict{Ready: true, Pipelined: framework.Permit},
		},
		"the gang's size placed, but one sub-group short of minSubGroups": {
			pg: pg(3).SubGroupPolicy(parts(2)).Obj(),
			tasks: []task{
				{part: "a", status: api.Running}, {part: "a", status: api.Running},
				{part: "b", status: api.Running}, {part: "b", status: api.Pending},
			},
			want: verdict{Pipelined: framework.Reject, Starving: true},
		},
		"a sub-group completed by a pipelined task: pipelined, not ready": {
			pg: pg(3).SubGroupPolicy(parts(2)).Obj(),
			tasks: []task{
				{part: "a", status: api.Running}, {part: "a", status: api.Running},
				{part: "b", status: api.Running}, {part: "b", status: api.Pipelined},
			},
			want: verdict{Pipelined: framework.Permit},
		},
		"too few sub-groups can ever be whole": {
			pg: pg(3).SubGroupPolicy(parts(2)).Obj(),
			tasks: []task{
				{part: "a", status: api.Running}, {part: "a", status: api.Running},
				{part: "b", status: api.Running}, {part: "b", status: api.Failed},
			},
			want: verdict{
				Invalid:   "NotEnoughPods: sub-group policy part has 1 whole sub-groups of pods that can run, fewer than its minSubGroups 2",
				Pipelined: framework.Reject, Starving: true,
			},
		},
		"a sub-group policy whose selector does not parse is invalid": {
			pg: pg(1).SubGroupPolicy(schedulingv1beta1.SubGroupPolicySpec{Name: "bad", LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "part", Operator: "Near"}},
			}}).Obj(),
			tasks: tasks(api.Running),
			want: verdict{
				Invalid: `InvalidSubGroupPolicy: spec.subGroupPolicy[0].labelSelector: "Near" is not a valid label selector operator`,
				Ready:   true, Pipelined: framework.Permit,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, jobs := open(t, map[*schedulingv1beta1.PodGroup][]task{tc.pg: tc.tasks})
			j := jobs[tc.pg.Name]
			got := verdict{
				Invalid:   p.JobValid(j).String(),
				Ready:     p.JobReady(j),
				Pipelined: p.JobPipelined(j),
				Starving:  p.JobStarving(j),
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestJobOrder(t *testing.T) {
	ready := func(name string) (*schedulingv1beta1.PodGroup, []task) {
		return schedtesting.MakePodGroup(name, "ns").MinMember(2).Obj(), tasks(api.Running, api.Running)
	}
	short := func(name string) (*schedulingv1beta1.PodGroup, []task) {
		return schedtesting.MakePodGroup(name, "ns").MinMember(2).Obj(), tasks(api.Running, api.Pending)
	}
	// Pipelined room is not a started gang: the job still goes first.
	pipelined := func(name string) (*schedulingv1beta1.PodGroup, []task) {
		return schedtesting.MakePodGroup(name, "ns").MinMember(2).Obj(), tasks(api.Running, api.Pipelined)
	}
	type job func(name string) (*schedulingv1beta1.PodGroup, []task)
	cases := map[string]struct {
		l, r job
		want int
	}{
		"short before ready":              {l: short, r: ready, want: -1},
		"ready after short":               {l: ready, r: short, want: 1},
		"pipelined before ready":          {l: pipelined, r: ready, want: -1},
		"two ready: no opinion":           {l: ready, r: ready, want: 0},
		"two short: no opinion":           {l: short, r: short, want: 0},
		"short and pipelined: no opinion": {l: short, r: pipelined, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lpg, lt := tc.l("l")
			rpg, rt := tc.r("r")
			p, jobs := open(t, map[*schedulingv1beta1.PodGroup][]task{lpg: lt, rpg: rt})
			if got := p.JobOrder(jobs["l"], jobs["r"]); got != tc.want {
				t.Errorf("JobOrder(l, r) = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestNewTakesNoArguments(t *testing.T) {
	if _, err := New(struct{}{}, &framework.Handle{}); err == nil {
		t.Error("New accepted arguments")
	}
}
