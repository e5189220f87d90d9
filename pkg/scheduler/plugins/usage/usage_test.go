package usage

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework/frameworktest"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

var now = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

// usageOf is a NodeUsage of age old over a five-minute window.
func usageOf(node, cpu, mem string, old time.Duration) *metricsv1alpha1.NodeUsage {
	return &metricsv1alpha1.NodeUsage{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Timestamp:  metav1.NewTime(now.Add(-old)),
		Window:     metav1.Duration{Duration: 5 * time.Minute},
		Usage:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
	}
}

func node(name string) *corev1.Node {
	return st.MakeNode(name).Alloc("cpu", "10", "memory", "100Gi", "pods", "110").Obj()
}

// started is a running pod on the node that started at the time given.
func started(name, node, cpu, mem string, at time.Time) *corev1.Pod {
	p := st.MakePod("ns", name).Req("cpu", cpu, "memory", mem).Node(node).Phase(corev1.PodRunning).Obj()
	p.Status.StartTime = &metav1.Time{Time: at}
	return p
}

func open(t *testing.T, objs api.Objects, args *configv1alpha1.UsageArgs) (*framework.Session, *Plugin) {
	t.Helper()
	if args == nil {
		args = &configv1alpha1.UsageArgs{}
	}
	args.Default()
	pl, err := New(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*Plugin)
	tier := framework.Tier{Plugins: []framework.TierPlugin{{Plugin: p}}}
	ssn, _ := frameworktest.Open(t, api.Build(objs), []framework.Tier{tier}, framework.Options{Now: now})
	return ssn, p
}

func pending(ssn *framework.Session) *api.TaskInfo {
	for _, j := range ssn.Snapshot.Jobs {
		for t := range j.TasksIn(api.Pending) {
			return t
		}
	}
	return nil
}

func TestEstimateAndFilter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		usage *metricsv1alpha1.NodeUsage
		pods  []*corev1.Pod
		args  *configv1alpha1.UsageArgs
		// want is the node's estimated CPU (milli) and memory (Gi), nil
		// when the node has no fresh usage.
		want    *[2]float64
		reasons []string
	}{
		{name: "no NodeUsage: not estimated, passes"},
		{name: "stale usage: not estimated, passes", usage: usageOf("n", "9", "90Gi", 6*time.Minute)},
		{name: "fresh usage under the thresholds", usage: usageOf("n", "5", "50Gi", time.Minute), want: &[2]float64{5000, 50}},
		{
			name: "CPU above 80%", usage: usageOf("n", "8500m", "10Gi", time.Minute), want: &[2]float64{8500, 10},
			reasons: []string{"node cpu usage above 80%"},
		},
		{
			name: "memory above a threshold given", usage: usageOf("n", "1", "75Gi", time.Minute), want: &[2]float64{1000, 75},
			args:    &configv1alpha1.UsageArgs{Thresholds: configv1alpha1.UsageThresholds{Memory: new(70.5)}},
			reasons: []string{"node memory usage above 70.5%"},
		},
		{
			name:  "pods that started before the window are in the measurement; later or unstarted ones count by request",
			usage: usageOf("n", "6", "10Gi", time.Minute),
			pods: []*corev1.Pod{
				started("old", "n", "4", "8Gi", now.Add(-10*time.Minute)),
				started("new", "n", "2", "4Gi", now.Add(-2*time.Minute)),
				st.MakePod("ns", "bound").Req("cpu", "1", "memory", "1Gi").Node("n").Obj(),
			},
			want:    &[2]float64{9000, 15},
			reasons: []string{"node cpu usage above 80%"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := api.Objects{Nodes: []*corev1.Node{node("n")}, Pods: append(tc.pods, st.MakePod("ns", "new-pod").Req("cpu", "1").Obj())}
			if tc.usage != nil {
				objs.NodeUsages = []*metricsv1alpha1.NodeUsage{tc.usage}
			}
			ssn, p := open(t, objs, tc.args)
			e := p.nodes["n"]
			switch {
			case tc.want == nil && e != nil:
				t.Fatalf("estimated %+v for a node without fresh usage", e)
			case tc.want != nil && e == nil:
				t.Fatalf("no estimate, want %v", *tc.want)
			case tc.want != nil && (e.cpu != tc.want[0] || e.mem != tc.want[1]*(1<<30)):
				t.Errorf("estimate cpu %v memory %vGi, want %v", e.cpu, e.mem/(1<<30), *tc.want)
			}
			st := p.Predicate(pending(ssn), ssn.Snapshot.Nodes["n"])
			var reasons []string
			if st != nil {
				reasons = st.Reasons
				if st.Code != framework.UnschedulableAndUnresolvable {
					t.Errorf("code %v, want UnschedulableAndUnresolvable", st.Code)
				}
			}
			if diff := cmp.Diff(tc.reasons, reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScore(t *testing.T) {
	objs := api.Objects{
		Nodes: []*corev1.Node{node("busy"), node("idle"), node("unmeasured")},
		Pods: []*corev1.Pod{
			// Requests say "idle" is the fuller node; its usage says not.
			started("big", "idle", "6", "60Gi", now.Add(-time.Hour)),
			started("small", "unmeasured", "4", "40Gi", now.Add(-time.Hour)),
			st.MakePod("ns", "new-pod").Req("cpu", "2", "memory", "20Gi").Obj(),
		},
		NodeUsages: []*metricsv1alpha1.NodeUsage{
			usageOf("busy", "6", "60Gi", time.Minute),
			usageOf("idle", "1", "10Gi", time.Minute),
		},
	}
	ssn, p := open(t, objs, &configv1alpha1.UsageArgs{Weight: new(int32(2))})
	task := pending(ssn)
	nodes := ssn.Snapshot.NodeList
	scores := make([]float64, len(nodes))
	p.ScoreNodes(task, nodes, scores)
	got := map[string]float64{}
	for i, n := range nodes {
		got[n.Name] = scores[i]
	}
	// busy: 8 of 10 CPUs and 80 of 100Gi once added → 20% free → 20 × 2.
	// idle: 3 CPUs, 30Gi → 70 × 2. unmeasured, by requests: 6, 60Gi → 40 × 2.
	want := map[string]float64{"busy": 40, "idle": 140, "unmeasured": 80}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

// TestAllocateSpreadsByUsage: with the usage plugin alone, a job of four
// pods on three nodes goes to the node that uses least, never to the
// node above the threshold, and each placement counts against its node
// within the cycle.
func TestAllocateSpreadsByUsage(t *testing.T) {
	objs := api.Objects{
		Nodes: []*corev1.Node{node("hot"), node("warm"), node("cool")},
		NodeUsages: []*metricsv1alpha1.NodeUsage{
			usageOf("hot", "9", "20Gi", time.Minute),
			usageOf("warm", "4", "20Gi", time.Minute),
			usageOf("cool", "1", "20Gi", time.Minute),
		},
	}
	objs.Queues = []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}
	objs.PodGroups = []*schedulingv1beta1.PodGroup{schedtesting.MakePodGroup("job", "ns").MinMember(1).Queue("default").Phase(schedulingv1beta1.PodGroupInqueue).Obj()}
	for _, name := range []string{"a", "b", "c", "d"} {
		objs.Pods = append(objs.Pods, st.MakePod("ns", name).Req("cpu", "2", "memory", "1Gi").Group("job").Obj())
	}
	args := &configv1alpha1.UsageArgs{}
	args.Default()
	pl, err := New(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	tier := framework.Tier{Plugins: []framework.TierPlugin{{Plugin: pl}}}
	r := frameworktest.Run(t, api.Build(objs), []framework.Tier{tier}, framework.Options{Now: now}, allocate.New())
	count := map[string]int{}
	for _, b := range r.Binds {
		count[b[len(b)-len("cool"):]]++
	}
	// Estimated CPUs once each pod is added: a to cool (3, against warm's
	// 6), b to cool (5 < 6), c to warm (6 < 7), d to cool (7 < 8).
	if want := map[string]int{"cool": 3, "warm": 1}; !cmp.Equal(want, count) {
		t.Errorf("placed %v (binds %v), want %v", count, r.Binds, want)
	}
}

func TestArguments(t *testing.T) {
	if _, err := New(&configv1alpha1.BinpackArgs{}, nil); err == nil {
		t.Errorf("arguments of another plugin were accepted")
	}
	bad := &configv1alpha1.UsageArgs{Thresholds: configv1alpha1.UsageThresholds{CPU: new(120.0)}, StaleAfter: &metav1.Duration{}}
	bad.Default()
	errs := bad.Validate(nil)
	want := []string{
		`thresholds.cpu: Invalid value: 120: must be a percentage between 0 and 100`,
		`staleAfter: Invalid value: "0s": must be positive`,
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestEstimatesFollowTheNodes: a node's estimate kept from the last
// session is made again when its tasks or its measurement change.
func TestEstimatesFollowTheNodes(t *testing.T) {
	args := &configv1alpha1.UsageArgs{}
	args.Default()
	pl, err := New(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*Plugin)
	tier := []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: p}}}}
	cpu := func(objs api.Objects) float64 {
		t.Helper()
		frameworktest.Open(t, api.Build(objs), tier, framework.Options{Now: now})
		return p.nodes["n"].cpu
	}
	objs := api.Objects{Nodes: []*corev1.Node{node("n")}, NodeUsages: []*metricsv1alpha1.NodeUsage{usageOf("n", "2", "10Gi", time.Minute)}}
	if got := cpu(objs); got != 2000 {
		t.Fatalf("estimate %v, want 2000", got)
	}
	objs.Pods = []*corev1.Pod{st.MakePod("ns", "bound").Req("cpu", "1").Node("n").Obj()}
	if got := cpu(objs); got != 3000 {
		t.Errorf("with a pod bound since: estimate %v, want 3000", got)
	}
	objs.NodeUsages = []*metricsv1alpha1.NodeUsage{usageOf("n", "5", "10Gi", 30*time.Second)}
	if got := cpu(objs); got != 6000 {
		t.Errorf("with a new measurement: estimate %v, want 6000", got)
	}
}
