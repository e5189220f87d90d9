package conformance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func TestCriticalPodsAreNeverVictims(t *testing.T) {
	task := func(pod *corev1.Pod) *api.TaskInfo { return api.NewTaskInfo(pod, "") }
	critical := st.MakePod("team", "critical").Obj()
	critical.Spec.PriorityClassName = "system-node-critical"
	candidates := []*api.TaskInfo{
		task(st.MakePod("team", "batch").Obj()),
		task(st.MakePod("kube-system", "dns").Obj()),
		task(critical),
		task(st.MakePod("team", "batch-2").Obj()),
	}
	var got []string
	for _, v := range (&Plugin{}).Preemptable(nil, candidates) {
		got = append(got, v.Name)
	}
	if diff := cmp.Diff([]string{"batch", "batch-2"}, got); diff != "" {
		t.Errorf("victims (-want,+got):\n%s", diff)
	}
	if n := len((&Plugin{}).Reclaimable(nil, candidates)); n != 2 {
		t.Errorf("reclaimable victims = %d, want 2", n)
	}
}
