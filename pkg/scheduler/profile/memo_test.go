package profile

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit/evaluatortest"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

const memoConfig = `actions: "allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: nodeorder
  - name: binpack
`

// memoProfile builds memoConfig's plugins over kube-scheduler's.
func memoProfile(t *testing.T) *Profile {
	t.Helper()
	return memoProfileWith(t, podfit.Options{})
}

func memoProfileWith(t *testing.T, o podfit.Options) *Profile {
	t.Helper()
	cfg, err := config.Load([]byte(memoConfig), NameRegistry())
	if err != nil {
		t.Fatal(err)
	}
	prof, err := Build(cfg, &framework.Handle{PodFit: evaluatortest.NewEvaluatorWith(t, o)})
	if err != nil {
		t.Fatal(err)
	}
	return prof
}

// randomCluster is nodes of assorted sizes, some tainted, some labelled.
func randomCluster(r *rand.Rand) []*corev1.Node {
	var nodes []*corev1.Node
	for i := range 10 + r.IntN(40) {
		n := st.MakeNode(fmt.Sprintf("n%03d", i)).
			Alloc("cpu", fmt.Sprint(2+r.IntN(15)), "memory", fmt.Sprintf("%dGi", 4+r.IntN(60))).
			Label("zone", fmt.Sprintf("z%d", r.IntN(3))).Obj()
		if r.IntN(4) == 0 {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		}
		// 0 to 3 soft taints: TaintToleration normalises by the most
		// tainted node, which may fill up and leave.
		for k := range r.IntN(4) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: fmt.Sprintf("soft-%d", k), Effect: corev1.TaintEffectPreferNoSchedule})
		}
		nodes = append(nodes, n.DeepCopy())
	}
	return nodes
}

// randomClass is one kind of pod; every pod of a class is alike.
// Pods of an avoiding class have a required anti-affinity to class 0 by
// zone.
func randomClass(r *rand.Rand, class int, avoids bool) func(name string) *corev1.Pod {
	cpu := fmt.Sprintf("%dm", 250*(1+r.IntN(8)))
	mem := fmt.Sprintf("%dMi", 256*(1+r.IntN(16)))
	zone := ""
	if r.IntN(3) == 0 {
		zone = fmt.Sprintf("z%d", r.IntN(3))
	}
	tolerates := r.IntN(2) == 0
	preferZone := r.IntN(3) == 0
	return func(name string) *corev1.Pod {
		p := st.MakePod("ns", name).Req("cpu", cpu, "memory", mem).Obj()
		// Each pod carries a label of its own, as workload pods do.
		p.Labels = map[string]string{"class": fmt.Sprint(class), "pod": name}
		if avoids {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					TopologyKey:   "zone",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"class": "0"}},
				}},
			}}
		}
		if zone != "" {
			p.Spec.NodeSelector = map[string]string{"zone": zone}
		}
		if tolerates {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
		}
		if preferZone && !avoids {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				// NodeAffinity normalises by the best node's weight: once
				// z1 is full, z2 nodes score as high as z1 ones did.
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
					Weight:     50,
					Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}}},
				}, {
					Weight:     20,
					Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"z2"}}}},
				}},
			}}
		}
		return p
	}
}

// place runs the tasks in order through one session, each placed where
// choose says, in statements that end after the tasks named in ends: with
// "commit", or with "discard" (as allocate undoes a gang that is not
// ready). It returns the node chosen for each task ("" when none).
func place(t *testing.T, tiers []framework.Tier, objects api.Objects, order []string, ends map[string]string,
	choose func(*framework.Session, *api.TaskInfo) *api.NodeInfo) []string {
	t.Helper()
	snap := api.Build(objects)
	ssn := framework.OpenSession(t.Context(), snap, tiers, framework.Options{Sink: discardSink{}})
	defer ssn.Close()
	tasks := map[string]*api.TaskInfo{}
	for _, j := range snap.Jobs {
		for _, task := range j.Tasks {
			tasks[task.Name] = task
		}
	}
	var out []string
	stmt := ssn.NewStatement()
	for _, name := range order {
		task := tasks[name]
		if n := choose(ssn, task); n != nil {
			if err := stmt.Allocate(task, n); err != nil {
				t.Fatal(err)
			}
			out = append(out, n.Name)
		} else {
			out = append(out, "")
		}
		switch ends[name] {
		case "discard":
			stmt.Discard()
			stmt = ssn.NewStatement()
		case "commit":
			stmt.Commit()
			stmt = ssn.NewStatement()
		}
	}
	stmt.Commit()
	return out
}

type discardSink struct{}

func (discardSink) Bind(*api.TaskInfo, string) {}

// TestFindNodeReusesAlikeTasksExactly: over random clusters and random
// sequences of alike pods, placing each pod with FindNode (which reuses
// the last alike pod's filtering and scoring, and kube-scheduler's filter
// verdicts kept for alike pods) chooses exactly the nodes that filtering
// (every filter run) and scoring every node afresh for each pod chooses.
func TestFindNodeReusesAlikeTasksExactly(t *testing.T) {
	prof, freshProf := memoProfile(t), memoProfileWith(t, podfit.Options{Fresh: true})
	reused := 0
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 7))
		objects := api.Objects{
			Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()},
			Nodes:  randomCluster(r),
		}
		// Class 1 is class 0's twin but for its labels, so that only the
		// labels tell them apart; class 2 avoids class 0: placing one of
		// its pods changes where class 0 may go on every node of a zone.
		twinSeed := r.Uint64()
		classes := []func(string) *corev1.Pod{
			randomClass(rand.New(rand.NewPCG(twinSeed, 1)), 0, false),
			randomClass(rand.New(rand.NewPCG(twinSeed, 1)), 1, false),
			randomClass(r, 2, true),
		}
		if r.IntN(4) == 0 {
			classes = append(classes, randomClass(r, 3, false))
		}
		var order []string
		ends := map[string]string{}
		for i := range 40 + r.IntN(80) {
			name := fmt.Sprintf("p%03d", i)
			// Avoiding pods are few and come late: once one is placed,
			// every pod's own labels count and no two pods are alike.
			c := r.IntN(len(classes))
			if c == 2 && (i < 30 || r.IntN(4) > 0) {
				c = r.IntN(2)
			}
			objects.Pods = append(objects.Pods, classes[c](name))
			order = append(order, name)
			// Statements of about five placements; one in four is undone.
			switch r.IntN(20) {
			case 0:
				ends[name] = "discard"
			case 1, 2, 3:
				ends[name] = "commit"
			}
		}
		fresh := place(t, freshProf.Tiers, objects, order, ends, func(ssn *framework.Session, task *api.TaskInfo) *api.NodeInfo {
			fits, _, _ := ssn.Candidates(task)
			return ssn.BestNode(task, fits)
		})
		memo := place(t, prof.Tiers, objects, order, ends, func(ssn *framework.Session, task *api.TaskInfo) *api.NodeInfo {
			before := ssn.Reused()
			defer func() { reused += ssn.Reused() - before }()
			n, future, _ := ssn.FindNode(task)
			if future {
				t.Fatalf("seed %d: %s pipelined with nothing releasing", seed, task.Name)
			}
			return n
		})
		if !slices.Equal(fresh, memo) {
			for i := range fresh {
				if fresh[i] != memo[i] {
					t.Fatalf("seed %d: pod %s goes to %q afresh but %q with reuse (placements %v vs %v)", seed, order[i], fresh[i], memo[i], fresh, memo)
				}
			}
		}
	}
	if reused < 1000 {
		t.Fatalf("only %d placements reused an alike pod's results: the comparison proved little", reused)
	}
	t.Logf("%d placements reused", reused)
}

// TestFindNodeTellsPodsApartByLabelsWhenAffinityReadsThem: two pods alike
// but for a label, with a running pod that refuses one of them in its zone
// by that label. The refused pod must not reuse its twin's results.
func TestFindNodeTellsPodsApartByLabelsWhenAffinityReadsThem(t *testing.T) {
	prof := memoProfile(t)
	twin := func(name, class string) *corev1.Pod {
		p := st.MakePod("ns", name).Req("cpu", "1").Obj()
		p.Labels = map[string]string{"class": class}
		return p
	}
	guard := st.MakePod("ns", "guard").Req("cpu", "1").Node("big").Phase(corev1.PodRunning).Obj()
	guard.Status.Phase = corev1.PodRunning
	guard.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey:   "zone",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"class": "refused"}},
		}},
	}}
	objects := api.Objects{
		Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()},
		Nodes: []*corev1.Node{
			// binpack prefers the fuller node, "big", which holds the
			// guard; of the empty nodes, the first: "a-spare", in the
			// guard's zone, then "small".
			st.MakeNode("a-spare").Alloc("cpu", "8", "memory", "8Gi").Label("zone", "a").Obj(),
			st.MakeNode("big").Alloc("cpu", "8", "memory", "8Gi").Label("zone", "a").Obj(),
			st.MakeNode("small").Alloc("cpu", "8", "memory", "8Gi").Label("zone", "b").Obj(),
		},
		Pods: []*corev1.Pod{guard, twin("welcome-0", "welcome"), twin("refused-0", "refused")},
	}
	got := place(t, prof.Tiers, objects, []string{"welcome-0", "refused-0"}, nil, func(ssn *framework.Session, task *api.TaskInfo) *api.NodeInfo {
		n, _, _ := ssn.FindNode(task)
		return n
	})
	if want := []string{"big", "small"}; !slices.Equal(got, want) {
		t.Errorf("placements %v, want %v", got, want)
	}
}
