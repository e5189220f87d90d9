package tasktopology

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/enqueue"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/gang"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/priority"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// cluster is the input of a test cycle.
type cluster struct {
	objs api.Objects
}

func newCluster(nodes int, alloc ...string) *cluster {
	c := &cluster{objs: api.Objects{Queues: []*schedulingv1beta1.Queue{schedtesting.MakeQueue("default").Obj()}}}
	for i := range nodes {
		c.objs.Nodes = append(c.objs.Nodes, st.MakeNode(fmt.Sprintf("n%d", i)).Alloc(alloc...).Obj())
	}
	return c
}

// job adds a job with the annotations and tasks given as role=count; its
// pods each request req. It returns the PodGroup for more settings.
func (c *cluster) job(name string, annotations map[string]string, tasks []string, req ...string) *schedulingv1beta1.PodGroup {
	pg := schedtesting.MakePodGroup(name, "ns").Phase(schedulingv1beta1.PodGroupInqueue)
	for k, v := range annotations {
		pg.Annotation(k, v)
	}
	n := 0
	for _, spec := range tasks {
		role, count, _ := strings.Cut(spec, "=")
		var k int
		fmt.Sscan(count, &k)
		for i := range k {
			c.objs.Pods = append(c.objs.Pods, st.MakePod("ns", fmt.Sprintf("%s-%s-%d", name, role, i)).Group(name).Role(role).Req(req...).Obj())
			n++
		}
	}
	pg.MinMember(int32(n))
	c.objs.PodGroups = append(c.objs.PodGroups, pg.Obj())
	return pg.Obj()
}

type recorder struct {
	binds map[string]string
	order []string
}

func (r *recorder) Bind(t *api.TaskInfo, node string) {
	r.binds[t.Name] = node
	r.order = append(r.order, t.Name)
}

// run runs enqueue and allocate with priority, gang and task-topology.
func (c *cluster) run(t *testing.T) *recorder {
	t.Helper()
	var plugins []framework.TierPlugin
	for _, f := range []framework.PluginFactory{newPriority, newGang, New} {
		p, err := f(nil, &framework.Handle{})
		if err != nil {
			t.Fatal(err)
		}
		plugins = append(plugins, framework.TierPlugin{Plugin: p})
	}
	r := &recorder{binds: map[string]string{}}
	ssn := framework.OpenSession(t.Context(), api.Build(c.objs), []framework.Tier{{Plugins: plugins}}, framework.Options{Sink: r})
	runCycle(ssn)
	ssn.Close()
	return r
}

var (
	newPriority framework.PluginFactory = priority.New
	newGang     framework.PluginFactory = gang.New
)

func runCycle(ssn *framework.Session) {
	enqueue.New().Execute(ssn)
	allocate.New().Execute(ssn)
}

// byNode lists the pods bound to each node, sorted.
func byNode(binds map[string]string) map[string][]string {
	out := map[string][]string{}
	for pod, node := range binds {
		out[node] = append(out[node], pod)
	}
	for _, pods := range out {
		slices.Sort(pods)
	}
	return out
}

// groups lists the groups of pods that share a node, sorted.
func groups(binds map[string]string) [][]string {
	var out [][]string
	for _, pods := range byNode(binds) {
		out = append(out, pods)
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

var tfAnnotations = map[string]string{
	batchv1alpha1.TaskTopologyAffinityKey:     "ps,worker",
	batchv1alpha1.TaskTopologyAntiAffinityKey: "ps",
}

// TestBuckets is the worked example of docs/task-topology.md: two
// parameter servers kept apart, four workers beside them, two each.
func TestBuckets(t *testing.T) {
	c := newCluster(0)
	c.job("tf", tfAnnotations, []string{"ps=2", "worker=4"}, "cpu", "1")
	snap := api.Build(c.objs)
	jt := topologyOf(snap.Jobs["ns/tf"])
	if jt == nil || jt.invalid != "" {
		t.Fatalf("topology: %+v", jt)
	}
	got := make([][]string, len(jt.buckets))
	for id, m := range jt.member {
		name := snap.Jobs["ns/tf"].Tasks[id].Name
		got[m.bucket] = append(got[m.bucket], name)
	}
	for _, g := range got {
		slices.Sort(g)
	}
	want := [][]string{
		{"tf-ps-0", "tf-worker-0", "tf-worker-2"},
		{"tf-ps-1", "tf-worker-1", "tf-worker-3"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("buckets (-want +got):\n%s", diff)
	}
}

// TestAllocateTensorFlow: the example's job on four 4-CPU nodes: each
// parameter server on its own node with two workers.
func TestAllocateTensorFlow(t *testing.T) {
	c := newCluster(4, "cpu", "4")
	c.job("tf", tfAnnotations, []string{"ps=2", "worker=4"}, "cpu", "1")
	r := c.run(t)
	want := [][]string{
		{"tf-ps-0", "tf-worker-0", "tf-worker-2"},
		{"tf-ps-1", "tf-worker-1", "tf-worker-3"},
	}
	if diff := cmp.Diff(want, groups(r.binds)); diff != "" {
		t.Errorf("pods sharing nodes (-want +got):\n%s", diff)
	}
	if r.order[0] != "tf-ps-0" || r.order[3] != "tf-ps-1" {
		t.Errorf("placement order %v, want bucket by bucket, parameter server first", r.order)
	}
}

// TestAntiAffinity: chief and evaluator must not share a node, nor two
// parameter servers; the job would fit on one node.
func TestAntiAffinity(t *testing.T) {
	c := newCluster(3, "cpu", "16")
	c.job("tf", map[string]string{
		batchv1alpha1.TaskTopologyAntiAffinityKey: "ps;chief,evaluator",
	}, []string{"chief=1", "evaluator=1", "ps=2"}, "cpu", "1")
	r := c.run(t)
	if r.binds["tf-chief-0"] == r.binds["tf-evaluator-0"] {
		t.Errorf("chief and evaluator both on %s", r.binds["tf-chief-0"])
	}
	if r.binds["tf-ps-0"] == r.binds["tf-ps-1"] {
		t.Errorf("both parameter servers on %s", r.binds["tf-ps-0"])
	}
	if len(r.binds) != 4 {
		t.Errorf("bound %v, want all 4 pods", r.binds)
	}
}

// TestAntiAffinityIsAPreference: with one node, anti-affine pods share it
// rather than wait.
func TestAntiAffinityIsAPreference(t *testing.T) {
	c := newCluster(1, "cpu", "4")
	c.job("tf", map[string]string{batchv1alpha1.TaskTopologyAntiAffinityKey: "ps"}, []string{"ps=2"}, "cpu", "1")
	if r := c.run(t); len(r.binds) != 2 {
		t.Errorf("bound %v, want both pods on the only node", r.binds)
	}
}

// TestSpill: a bucket larger than a node fills the node, and the rest go
// to one other node rather than scatter.
func TestSpill(t *testing.T) {
	c := newCluster(4, "cpu", "4")
	c.job("tf", map[string]string{batchv1alpha1.TaskTopologyAffinityKey: "ps,worker"}, []string{"ps=1", "worker=6"}, "cpu", "1")
	r := c.run(t)
	nodes := byNode(r.binds)
	if len(r.binds) != 7 || len(nodes) != 2 {
		t.Fatalf("pods per node %v, want all 7 on two nodes", nodes)
	}
	if home := nodes[r.binds["tf-ps-0"]]; len(home) != 4 {
		t.Errorf("the parameter server's node holds %v, want it full", home)
	}
}

// TestPlacedPodsAnchorBuckets: a parameter server already running on n2
// draws the job's pending workers there (after a restart of a worker, or
// of the scheduler).
func TestPlacedPodsAnchorBuckets(t *testing.T) {
	c := newCluster(3, "cpu", "8")
	c.job("tf", map[string]string{batchv1alpha1.TaskTopologyAffinityKey: "ps,worker"}, []string{"worker=2"}, "cpu", "1")
	c.objs.Pods = append(c.objs.Pods, st.MakePod("ns", "tf-ps-0").Group("tf").Role("ps").Req("cpu", "1").Node("n2").Phase(corev1.PodRunning).Obj())
	c.objs.PodGroups[0].Spec.MinMember = 3
	r := c.run(t)
	for _, w := range []string{"tf-worker-0", "tf-worker-1"} {
		if r.binds[w] != "n2" {
			t.Errorf("%s on %q, want n2 beside the running parameter server", w, r.binds[w])
		}
	}
}

// TestTaskOrderAnnotation: the task-order annotation decides which task's
// pods are placed first.
func TestTaskOrderAnnotation(t *testing.T) {
	c := newCluster(2, "cpu", "8")
	c.job("tf", map[string]string{
		batchv1alpha1.TaskTopologyAffinityKey:  "ps,worker",
		batchv1alpha1.TaskTopologyTaskOrderKey: "worker,ps",
	}, []string{"ps=1", "worker=2"}, "cpu", "1")
	r := c.run(t)
	want := []string{"tf-worker-0", "tf-worker-1", "tf-ps-0"}
	if diff := cmp.Diff(want, r.order); diff != "" {
		t.Errorf("placement order (-want +got):\n%s", diff)
	}
	if nodes := byNode(r.binds); len(nodes) != 1 {
		t.Errorf("pods per node %v, want all on one node", nodes)
	}
}

// TestInvalidAnnotation: a job whose annotation cannot be read is not
// scheduled, with the annotation named in the reason.
func TestInvalidAnnotation(t *testing.T) {
	c := newCluster(1, "cpu", "8")
	c.job("tf", map[string]string{batchv1alpha1.TaskTopologyAffinityKey: "ps,,worker"}, []string{"ps=1"}, "cpu", "1")
	snap := api.Build(c.objs)
	p, _ := New(nil, &framework.Handle{})
	pl := p.(*Plugin)
	ssn := framework.OpenSession(t.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: pl}}}}, framework.Options{})
	defer ssn.Close()
	r := pl.JobValid(snap.Jobs["ns/tf"])
	if r == nil || !strings.Contains(r.String(), batchv1alpha1.TaskTopologyAffinityKey) || !strings.Contains(r.String(), "empty task name") {
		t.Errorf("JobValid = %v, want a reason naming the annotation and the empty name", r)
	}
}

// TestUnrelatedJobsAreSigned: pods of jobs without the annotations, and
// pods of tasks the annotations do not relate, score 0 and are signed;
// related pods are not.
func TestUnrelatedJobsAreSigned(t *testing.T) {
	c := newCluster(2, "cpu", "8")
	c.job("tf", map[string]string{batchv1alpha1.TaskTopologyAffinityKey: "ps,worker"}, []string{"ps=1", "worker=1", "chief=1"}, "cpu", "1")
	c.job("plain", nil, []string{"w=1"}, "cpu", "1")
	snap := api.Build(c.objs)
	p, _ := New(nil, &framework.Handle{})
	pl := p.(*Plugin)
	ssn := framework.OpenSession(t.Context(), snap, []framework.Tier{{Plugins: []framework.TierPlugin{{Plugin: pl}}}}, framework.Options{})
	defer ssn.Close()
	nodes := []*api.NodeInfo{snap.Nodes["n0"], snap.Nodes["n1"]}
	for _, tc := range []struct {
		job, pod string
		signed   bool
	}{
		{"ns/tf", "tf-ps-0", false},
		{"ns/tf", "tf-chief-0", true},
		{"ns/plain", "plain-w-0", true},
	} {
		var task *api.TaskInfo
		for _, tk := range snap.Jobs[api.JobID(tc.job)].Tasks {
			if tk.Name == tc.pod {
				task = tk
			}
		}
		if _, ok := pl.Signature(task); ok != tc.signed {
			t.Errorf("%s signed = %v, want %v", tc.pod, ok, tc.signed)
		}
		scores := make([]float64, 2)
		pl.ScoreNodes(task, nodes, scores)
		if tc.signed && (scores[0] != 0 || scores[1] != 0) {
			t.Errorf("%s scores %v, want 0", tc.pod, scores)
		}
	}
}

// TestScores: the scores of docs/task-topology.md for a worker whose
// parameter server is on n0, with n1 empty and n2 holding the other
// parameter server's bucket.
func TestScores(t *testing.T) {
	c := newCluster(3, "cpu", "4")
	c.job("tf", tfAnnotations, []string{"worker=2"}, "cpu", "1")
	c.objs.Pods = append(c.objs.Pods,
		st.MakePod("ns", "tf-ps-0").Group("tf").Role("ps").Req("cpu", "1").Node("n0").Phase(corev1.PodRunning).Obj(),
		st.MakePod("ns", "tf-ps-1").Group("tf").Role("ps").Req("cpu", "1").Node("n2").Phase(corev1.PodRunning).Obj())
	snap := api.Build(c.objs)
	jt := topologyOf(snap.Jobs["ns/tf"])
	pl := &Plugin{weight: 1, jobs: map[api.JobID]*jobTopology{"ns/tf": jt}}
	nodes := []*api.NodeInfo{snap.Nodes["n0"], snap.Nodes["n1"], snap.Nodes["n2"]}
	got := map[string][]float64{}
	for _, tk := range snap.Jobs["ns/tf"].Tasks {
		if tk.Role != "worker" {
			continue
		}
		scores := make([]float64, 3)
		pl.ScoreNodes(tk, nodes, scores)
		got[tk.Name] = scores
	}
	// Bucket 0 is n0's, bucket 1 n2's; worker-0 joins bucket 0 and
	// worker-1 the lighter bucket 1. Each scores its bucket's node 100 and
	// the others by their share of the placed parameter servers: half of 50.
	want := map[string][]float64{
		"tf-worker-0": {100, 0, 25},
		"tf-worker-1": {25, 0, 100},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}
