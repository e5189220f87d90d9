package cdp

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
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

func TestCooldownProtectsRecentlyStartedPods(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	started := func(w *st.PodWrapper, ago time.Duration) *corev1.Pod {
		p := w.Node("n1").Phase(corev1.PodRunning).Obj()
		at := metav1.NewTime(now.Add(-ago))
		p.Status.StartTime = &at
		return p
	}
	cooldown := schedulingv1beta1.CooldownTimeKey
	pods := []*corev1.Pod{
		started(st.MakePod("ns", "cooling").Annotation(cooldown, "10m"), 5*time.Minute),
		started(st.MakePod("ns", "cooled").Annotation(cooldown, "10m"), 15*time.Minute),
		started(st.MakePod("ns", "label").Annotation(cooldown, "1h"), 30*time.Minute),
		started(st.MakePod("ns", "no-cooldown"), time.Second),
		started(st.MakePod("ns", "bad-value").Annotation(cooldown, "ten minutes"), time.Second),
		started(st.MakePod("ns", "g-0").Group("g"), 2*time.Minute),
		// Not started yet: it cools down from its creation.
		st.MakePod("ns", "created").Annotation(cooldown, "10m").Created(metav1.NewTime(now.Add(-time.Minute))).Node("n1").Phase(corev1.PodRunning).Obj(),
	}
	pods[2].Labels = map[string]string{cooldown: "1h"}
	delete(pods[2].Annotations, cooldown)
	pg := schedtesting.MakePodGroup("g", "ns").MinMember(1).Phase(schedulingv1beta1.PodGroupRunning).Obj()
	pg.Annotations = map[string]string{cooldown: "5m"}
	snap := api.Build(api.Objects{
		Nodes:     []*corev1.Node{st.MakeNode("n1").Alloc("cpu", "100").Obj()},
		Pods:      pods,
		PodGroups: []*schedulingv1beta1.PodGroup{pg},
		Queues:    []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()},
	})
	p, err := New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	ssn := framework.OpenSession(t.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: p}}}}, framework.Options{Now: now})
	defer ssn.Close()
	var candidates []*api.TaskInfo
	for _, pod := range pods {
		candidates = append(candidates, snap.Jobs[api.JobIDOfPod(pod)].Tasks[pod.UID])
	}
	names := func(ts []*api.TaskInfo) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return out
	}
	want := []string{"cooled", "no-cooldown", "bad-value"}
	if diff := cmp.Diff(want, names(ssn.Preemptable(nil, candidates))); diff != "" {
		t.Errorf("preemptable (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(want, names(ssn.Reclaimable(nil, candidates))); diff != "" {
		t.Errorf("reclaimable (-want,+got):\n%s", diff)
	}
}
