package deviceshare

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// gpuNode has cards of 16,000 (MiB) each.
func gpuNode(name string, cards int) *corev1.Node {
	return st.MakeNode(name).Alloc("cpu", "64", "memory", "256Gi",
		string(api.ResourceGPUNumber), fmt.Sprint(cards), string(api.ResourceGPUMemory), fmt.Sprint(16000*cards)).Obj()
}

func sharePod(name, mem string) *st.PodWrapper {
	return st.MakePod("ns", name).Req("cpu", "1", string(api.ResourceGPUMemory), mem)
}

func cardsPod(name, n string) *st.PodWrapper {
	return st.MakePod("ns", name).Req("cpu", "1", string(api.ResourceGPUNumber), n)
}

func args(policy string) *configv1alpha1.DeviceShareArgs {
	return &configv1alpha1.DeviceShareArgs{SchedulePolicy: &policy}
}

type recorder struct {
	binds map[string]string
}

func (r *recorder) Bind(t *api.TaskInfo, node string) {
	r.binds[t.Name] = node + "/" + api.FormatGPUIndex(t.GPUIndex)
}

// place runs one allocate cycle with gang and deviceshare and returns, per
// pod placed, "node/cards".
func place(t *testing.T, a *configv1alpha1.DeviceShareArgs, o api.Objects) (map[string]string, *framework.Session) {
	t.Helper()
	g, err := gang.New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(a, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	o.Queues = append(o.Queues, schedtesting.MakeQueue("default").Obj())
	snap := api.Build(o)
	rec := &recorder{binds: map[string]string{}}
	tiers := []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: g}, {Plugin: d}}}}
	ssn := framework.OpenSession(t.Context(), snap, tiers, framework.Options{Now: time.Unix(0, 0), Sink: rec})
	allocate.New().Execute(ssn)
	ssn.Close()
	return rec.binds, ssn
}

func inqueue(name string, min int32) *schedulingv1beta1.PodGroup {
	return schedtesting.MakePodGroup(name, "ns").MinMember(min).Queue("default").Phase(schedulingv1beta1.PodGroupInqueue).Obj()
}

func TestCardChoice(t *testing.T) {
	// n0 card 0 holds 10,000 of 16,000; card 1 holds 4,000; cards 2, 3 are idle.
	running := []*corev1.Pod{
		sharePod("r0", "10000").Node("n0").Phase(corev1.PodRunning).Annotation(api.GPUIndexAnnotation, "0").Obj(),
		sharePod("r1", "4000").Node("n0").Phase(corev1.PodRunning).Annotation(api.GPUIndexAnnotation, "1").Obj(),
	}
	cases := map[string]struct {
		policy string
		pods   []*corev1.Pod
		want   map[string]string
	}{
		"binpack puts a share on the fullest card that fits": {
			policy: configv1alpha1.DeviceSharePolicyBinpack,
			pods:   []*corev1.Pod{sharePod("s", "6000").Group("s").Obj()},
			want:   map[string]string{"s": "n0/0"},
		},
		"binpack passes over a card without room": {
			policy: configv1alpha1.DeviceSharePolicyBinpack,
			pods:   []*corev1.Pod{sharePod("s", "8000").Group("s").Obj()},
			want:   map[string]string{"s": "n0/1"},
		},
		"spread puts a share on an idle card of the emptiest node": {
			policy: configv1alpha1.DeviceSharePolicySpread,
			pods:   []*corev1.Pod{sharePod("s", "6000").Group("s").Obj()},
			want:   map[string]string{"s": "n1/0"},
		},
		"whole cards are idle cards only": {
			policy: configv1alpha1.DeviceSharePolicyBinpack,
			pods:   []*corev1.Pod{cardsPod("c", "2").Group("c").Obj()},
			want:   map[string]string{"c": "n0/2,3"},
		},
		"shares of one gang fill one card before the next": {
			policy: configv1alpha1.DeviceSharePolicyBinpack,
			pods: []*corev1.Pod{
				sharePod("g-0", "8000").Group("g").Obj(), sharePod("g-1", "8000").Group("g").Obj(),
				sharePod("g-2", "8000").Group("g").Obj(),
			},
			// After n0 card 1 (12,000 free) takes one, it has 4,000 left;
			// card 2 then takes two.
			want: map[string]string{"g-0": "n0/1", "g-1": "n0/2", "g-2": "n0/2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var groups []*schedulingv1beta1.PodGroup
			seen := map[string]int32{}
			for _, p := range tc.pods {
				seen[p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]]++
			}
			for g, n := range seen {
				groups = append(groups, inqueue(g, n))
			}
			got, _ := place(t, args(tc.policy), api.Objects{
				Nodes:     []*corev1.Node{gpuNode("n0", 4), gpuNode("n1", 4)},
				Pods:      append(append([]*corev1.Pod{}, running...), tc.pods...),
				PodGroups: groups,
			})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("placements (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestGangThatDoesNotFitReleasesItsCards(t *testing.T) {
	// Three whole-card pods want three idle cards on one node; there are two
	// per node. The gang is discarded whole, and the cards its first pods
	// took are free again for the single-card job that follows.
	got, ssn := place(t, args(configv1alpha1.DeviceSharePolicyBinpack), api.Objects{
		Nodes: []*corev1.Node{gpuNode("n0", 2)},
		Pods: []*corev1.Pod{
			cardsPod("big-0", "1").Group("big").Created(at(0)).Obj(), cardsPod("big-1", "1").Group("big").Created(at(0)).Obj(),
			cardsPod("big-2", "1").Group("big").Created(at(0)).Obj(),
			cardsPod("small", "2").Group("small").Created(at(1)).Obj(),
		},
		PodGroups: []*schedulingv1beta1.PodGroup{inqueue("big", 3), inqueue("small", 1)},
	})
	if diff := cmp.Diff(map[string]string{"small": "n0/0,1"}, got); diff != "" {
		t.Errorf("placements (-want,+got):\n%s", diff)
	}
	n := ssn.Snapshot.Nodes["n0"]
	for i, d := range n.GPUs {
		if d.Tasks != 1 || d.Used != d.Memory {
			t.Errorf("card %d = %+v, want held whole by one task", i, d)
		}
	}
	for _, j := range ssn.Snapshot.Jobs {
		for _, tk := range j.Tasks {
			if strings.HasPrefix(tk.Name, "big") && tk.GPUIndex != nil {
				t.Errorf("discarded task %s keeps cards %v", tk.Name, tk.GPUIndex)
			}
		}
	}
}

func at(sec int64) metav1.Time { return metav1.NewTime(time.Unix(sec, 0)) }

func TestPredicateReasons(t *testing.T) {
	p, err := New(nil, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	dp := p.(*Plugin)
	snap := api.Build(api.Objects{
		Nodes: []*corev1.Node{gpuNode("gpu", 2), st.MakeNode("cpu").Alloc("cpu", "8").Obj()},
		Pods: []*corev1.Pod{
			sharePod("held", "12000").Node("gpu").Phase(corev1.PodRunning).Annotation(api.GPUIndexAnnotation, "0").Obj(),
			cardsPod("whole", "1").Node("gpu").Phase(corev1.PodRunning).Annotation(api.GPUIndexAnnotation, "1").Obj(),
		},
	})
	task := func(pod *corev1.Pod) *api.TaskInfo { return api.NewTaskInfo(pod, "j") }
	cases := map[string]struct {
		pod  *corev1.Pod
		node string
		want string
	}{
		"a share larger than any free card":      {pod: sharePod("s", "5000").Obj(), node: "gpu", want: "deviceshare: Insufficient GPU memory on any one card"},
		"a share that fits the held card":        {pod: sharePod("s", "4000").Obj(), node: "gpu", want: "fits"},
		"a whole card when none is idle":         {pod: cardsPod("c", "1").Obj(), node: "gpu", want: "deviceshare: Insufficient idle GPU cards"},
		"a node without cards":                   {pod: sharePod("s", "1").Obj(), node: "cpu", want: "deviceshare: node has no GPU cards (volcano.sh/gpu-number)"},
		"a pod asking for both kinds":            {pod: st.MakePod("ns", "b").Req(string(api.ResourceGPUMemory), "1", string(api.ResourceGPUNumber), "1").Obj(), node: "gpu", want: "deviceshare: the pod asks for both volcano.sh/gpu-memory and volcano.sh/gpu-number: a pod shares one card or takes whole cards, not both"},
		"a pod without GPUs is not the plugin's": {pod: st.MakePod("ns", "x").Req("cpu", "1").Obj(), node: "cpu", want: "fits"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := dp.Predicate(task(tc.pod), snap.Nodes[tc.node]).Error()
			if got != tc.want {
				t.Errorf("Predicate = %q, want %q", got, tc.want)
			}
		})
	}
	// Without the whole-card task, its card is idle again.
	var whole *api.TaskInfo
	for _, tk := range snap.Nodes["gpu"].Tasks {
		if tk.Name == "whole" {
			whole = tk
		}
	}
	if st := dp.PredicateWithout(task(cardsPod("c", "1").Obj()), snap.Nodes["gpu"], []*api.TaskInfo{whole}); st != nil {
		t.Errorf("PredicateWithout the card's holder = %v, want fits", st)
	}
	if st := dp.PredicateWithout(task(cardsPod("c", "2").Obj()), snap.Nodes["gpu"], []*api.TaskInfo{whole}); st == nil {
		t.Errorf("PredicateWithout for two cards while one is shared = fits, want a rejection")
	}
}

func TestDisabledKindsAreLeftToThePooledCheck(t *testing.T) {
	off := false
	got, _ := place(t, &configv1alpha1.DeviceShareArgs{GPUSharing: &off}, api.Objects{
		Nodes:     []*corev1.Node{gpuNode("n0", 2)},
		Pods:      []*corev1.Pod{sharePod("s", "20000").Group("s").Obj()},
		PodGroups: []*schedulingv1beta1.PodGroup{inqueue("s", 1)},
	})
	// 20,000 is more than a card but less than the node's pool: without
	// sharing, nothing checks cards and none are written.
	if diff := cmp.Diff(map[string]string{"s": "n0/"}, got); diff != "" {
		t.Errorf("placements (-want,+got):\n%s", diff)
	}
}
