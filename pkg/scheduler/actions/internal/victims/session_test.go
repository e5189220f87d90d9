package victims

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// now is the cycle's time in every test session.
var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// open builds a session at now over the objects, in the default queue,
// after edit (when set) has changed the snapshot.
func open(t *testing.T, o api.Objects, edit func(*api.Snapshot)) (*framework.Session, *frameworktest.Recorder) {
	t.Helper()
	o.Queues = append(o.Queues, schedtesting.MakeQueue("default").Obj())
	snap := api.Build(o)
	if edit != nil {
		edit(snap)
	}
	tiers := []framework.Tier{frameworktest.Tier(t, nil, priority.New, gang.New, conformance.New)}
	return frameworktest.Open(t, snap, tiers, framework.Options{Now: now})
}

// lowerPriority is the preempt action's rule without its plugins: jobs of
// strictly lower priority, every candidate let through.
func lowerPriority() *Policy {
	return &Policy{
		Eligible: func(preemptor, victimJob *api.JobInfo, _ *api.TaskInfo) bool {
			return victimJob.Priority < preemptor.Priority
		},
		Narrow: func(_ *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo { return candidates },
		NoVictims: func(*api.TaskInfo) *framework.Reason {
			return framework.Reasonf("NoVictims", "nothing to evict")
		},
	}
}

// task returns the job's copy of the task named name, and its job.
func task(t *testing.T, s *api.Snapshot, name string) (*api.JobInfo, *api.TaskInfo) {
	t.Helper()
	for _, j := range s.Jobs {
		for _, tk := range j.Tasks {
			if tk.Name == name {
				return j, tk
			}
		}
	}
	t.Fatalf("no task %s", name)
	return nil, nil
}

func names(tasks []*api.TaskInfo) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.Name)
	}
	return out
}

func node(name, cpu string) *corev1.Node { return st.MakeNode(name).Alloc("cpu", cpu).Obj() }

// pod is a standalone pod of priority prio asking for cpu; running on node
// when node is set.
func pod(name, cpu string, prio int32, node string) *corev1.Pod {
	w := st.MakePod("ns", name).Req("cpu", cpu).Priority(prio)
	if node != "" {
		w = w.Node(node).Phase(corev1.PodRunning)
	}
	return w.Obj()
}

// member is a pod of gang g, running on node when node is set.
func member(g, name, cpu string, prio int32, node string) *corev1.Pod {
	w := st.MakePod("ns", name).Group(g).Req("cpu", cpu).Priority(prio)
	if node != "" {
		w = w.Node(node).Phase(corev1.PodRunning)
	}
	return w.Obj()
}

// podGroup is a PodGroup of minMember min in the phase.
func podGroup(name string, min int32, phase schedulingv1beta1.PodGroupPhase) *schedulingv1beta1.PodGroup {
	return schedtesting.MakePodGroup(name, "ns").MinMember(min).Phase(phase).Obj()
}

// createdAt sets a pod's creation time, minutes after now's hour began.
func createdAt(p *corev1.Pod, minutes int) *corev1.Pod {
	p.CreationTimestamp = metav1.NewTime(now.Truncate(time.Hour).Add(time.Duration(minutes) * time.Minute))
	return p
}
