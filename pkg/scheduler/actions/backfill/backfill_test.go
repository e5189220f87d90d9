package backfill

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

type recorder struct{ binds []string }

func (r *recorder) Bind(t *api.TaskInfo, node string) { r.binds = append(r.binds, t.Name) }

func TestBackfillPlacesBestEffortTasksOnly(t *testing.T) {
	queues := []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}
	node := st.MakeNode("n0").Alloc("cpu", "4", "memory", "16Gi").Obj()
	pg := func(name string, phase schedulingv1beta1.PodGroupPhase) *schedulingv1beta1.PodGroup {
		return schedtesting.MakePodGroup(name, "ns").MinMember(1).Queue("default").Phase(phase).Obj()
	}
	cases := map[string]struct {
		pods      []*corev1.Pod
		podGroups []*schedulingv1beta1.PodGroup
		want      []string
	}{
		"best-effort pods of an admitted job are placed": {
			pods:      []*corev1.Pod{st.MakePod("ns", "be-0").Group("a").Obj(), st.MakePod("ns", "be-1").Group("a").Obj()},
			podGroups: []*schedulingv1beta1.PodGroup{pg("a", schedulingv1beta1.PodGroupInqueue)},
			want:      []string{"be-0", "be-1"},
		},
		"pods with requests are left to allocate": {
			pods:      []*corev1.Pod{st.MakePod("ns", "req").Group("a").Req("cpu", "1").Obj()},
			podGroups: []*schedulingv1beta1.PodGroup{pg("a", schedulingv1beta1.PodGroupInqueue)},
		},
		"of a job with both, only the best-effort pod": {
			pods:      []*corev1.Pod{st.MakePod("ns", "req").Group("a").Req("cpu", "1").Obj(), st.MakePod("ns", "be").Group("a").Obj()},
			podGroups: []*schedulingv1beta1.PodGroup{pg("a", schedulingv1beta1.PodGroupInqueue)},
			want:      []string{"be"},
		},
		"a job not admitted waits": {
			pods:      []*corev1.Pod{st.MakePod("ns", "be").Group("a").Obj()},
			podGroups: []*schedulingv1beta1.PodGroup{pg("a", schedulingv1beta1.PodGroupPending)},
		},
		"among many jobs with requests, the one best-effort job": {
			pods: []*corev1.Pod{
				st.MakePod("ns", "r0").Group("r0").Req("cpu", "1").Obj(), st.MakePod("ns", "r1").Group("r1").Req("cpu", "1").Obj(),
				st.MakePod("ns", "be").Group("b").Obj(),
			},
			podGroups: []*schedulingv1beta1.PodGroup{
				pg("r0", schedulingv1beta1.PodGroupInqueue), pg("r1", schedulingv1beta1.PodGroupInqueue), pg("b", schedulingv1beta1.PodGroupInqueue),
			},
			want: []string{"be"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := api.Build(api.Objects{Nodes: []*corev1.Node{node}, Pods: tc.pods, PodGroups: tc.podGroups, Queues: queues})
			rec := &recorder{}
			ssn := framework.OpenSession(t.Context(), snap, nil, framework.Options{Now: time.Unix(0, 0), Sink: rec})
			New().Execute(ssn)
			ssn.Close()
			slices.Sort(rec.binds)
			if !slices.Equal(rec.binds, tc.want) {
				t.Errorf("placed %v, want %v", rec.binds, tc.want)
			}
		})
	}
}
