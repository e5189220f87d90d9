package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// TestPatchedSnapshotsEqualAFreshOne feeds two caches the same random
// events. One is snapshotted after every event, and its snapshots are
// changed as a cycle would change them and handed back as touched; the
// other is snapshotted once at the end. The patched snapshot must equal the
// fresh one: the same nodes and jobs, lists and totals.
func TestPatchedSnapshotsEqualAFreshOne(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			patched, fresh := newCache(), newCache()
			both := func(f func(c *Cache)) { f(patched); f(fresh) }
			var lent map[api.JobID]string
			held := map[api.JobID]*api.JobInfo{}
			for step := range 300 {
				ev := randomEvent(r, step)
				both(ev)
				// What the cache lent the last snapshot, it never changes.
				for id, was := range lent {
					if now := fingerprint(held[id]); now != was {
						t.Fatalf("step %d: lent job %s changed: %s, was %s", step, id, now, was)
					}
				}
				snap := patched.Snapshot()
				checkSnapshot(t, snap)
				lent = map[api.JobID]string{}
				clear(held)
				for id, j := range snap.Jobs {
					if snap.Lent(id) {
						lent[id] = fingerprint(j)
						held[id] = j
					}
				}
				touchRandomly(r, snap, patched)
			}
			got, want := patched.Snapshot(), fresh.Snapshot()
			checkSnapshot(t, got)
			compareSnapshots(t, got, want)
		})
	}
}

// randomEvent returns one change to a cache: nodes come, change and go;
// PodGroups come, are admitted, are given phases and go; pods come, bind, finish and go.
func randomEvent(r *rand.Rand, step int) func(c *Cache) {
	node := fmt.Sprintf("n%d", r.IntN(6))
	group := fmt.Sprintf("g%d", r.IntN(8))
	pod := fmt.Sprintf("%s-%d", group, r.IntN(4))
	queue := []string{"default", "q1"}[r.IntN(2)]
	ns := []string{"a", "b"}[r.IntN(2)]
	_ = step
	switch r.IntN(10) {
	case 0:
		cpu := fmt.Sprint(4 + r.IntN(3)*4)
		return func(c *Cache) { c.UpdateNode(st.MakeNode(node).Alloc("cpu", cpu, "nvidia.com/gpu", "8").Obj()) }
	case 1:
		return func(c *Cache) { c.DeleteNode(st.MakeNode(node).Obj()) }
	case 2:
		phase := []schedulingv1beta1.PodGroupPhase{"", schedulingv1beta1.PodGroupPending, schedulingv1beta1.PodGroupInqueue, schedulingv1beta1.PodGroupRunning}[r.IntN(4)]
		return func(c *Cache) {
			c.UpdatePodGroup(schedtesting.MakePodGroup(group, ns).Queue(queue).MinMember(2).Phase(phase).
				MinResources(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), "nvidia.com/gpu": resource.MustParse("1")}).Obj())
		}
	case 3:
		return func(c *Cache) { c.DeletePodGroup(schedtesting.MakePodGroup(group, ns).Obj()) }
	case 4, 5:
		bound := r.IntN(2) == 0
		return func(c *Cache) {
			p := st.MakePod(ns, pod).Group(group).Req("cpu", "1", "nvidia.com/gpu", "1")
			if bound {
				p = p.Node(node).Phase(corev1.PodRunning)
			}
			c.UpdatePod(p.Obj())
		}
	case 6:
		return func(c *Cache) {
			p := st.MakePod(ns, pod).Group(group).Req("cpu", "1").Node(node).Phase(corev1.PodRunning).Obj()
			p.Status.Phase = corev1.PodSucceeded
			c.UpdatePod(p)
		}
	case 7:
		return func(c *Cache) { c.DeletePod(st.MakePod(ns, pod).Obj()) }
	case 8:
		return func(c *Cache) { c.MarkEnqueued(api.NewJobID(ns, group)) }
	default:
		// A phase a cycle decided, whose write may be held.
		phase := []schedulingv1beta1.PodGroupPhase{schedulingv1beta1.PodGroupRunning, schedulingv1beta1.PodGroupUnknown, schedulingv1beta1.PodGroupPending}[r.IntN(3)]
		return func(c *Cache) {
			c.KeepPhases(map[api.JobID]schedulingv1beta1.PodGroupPhase{api.NewJobID(ns, group): phase})
		}
	}
}

// fingerprint is what a job holds and how its tasks stand.
func fingerprint(j *api.JobInfo) string {
	if j == nil {
		return "<nil>"
	}
	var tasks []string
	for _, t := range j.Tasks {
		tasks = append(tasks, fmt.Sprintf("%s:%s@%s", t.UID, t.Status, t.NodeName))
	}
	slices.Sort(tasks)
	return fmt.Sprintf("%s phase=%s allocated=%s request=%s priority=%d tasks=%v", j.UID, j.Phase, j.Allocated, j.TotalRequest, j.Priority, tasks)
}

// touchRandomly changes some of the snapshot's nodes and jobs, as a cycle
// would, and gives them back to the cache as touched.
func touchRandomly(r *rand.Rand, snap *api.Snapshot, c *Cache) {
	nodes, jobs := map[string]bool{}, map[api.JobID]bool{}
	for _, n := range snap.NodeList {
		if r.IntN(4) == 0 {
			n.Used.MilliCPU += 1000
			nodes[n.Name] = true
		}
	}
	for _, j := range snap.JobList() {
		if r.IntN(4) == 0 {
			j = snap.Own(j.UID)
			j.Allocated.MilliCPU += 1000
			j.Phase = schedulingv1beta1.PodGroupRunning
			jobs[j.UID] = true
		}
	}
	c.Invalidate(nodes, jobs)
}

// checkSnapshot checks a snapshot's lists and totals against its maps.
func checkSnapshot(t *testing.T, s *api.Snapshot) {
	t.Helper()
	var names []string
	for name, n := range s.Nodes {
		names = append(names, name)
		if s.NodeList[slices.IndexFunc(s.NodeList, func(m *api.NodeInfo) bool { return m.Name == name })] != n {
			t.Fatalf("node list holds another copy of %s", name)
		}
	}
	slices.Sort(names)
	if len(names) != len(s.NodeList) {
		t.Fatalf("node list has %d nodes, the map %d", len(s.NodeList), len(names))
	}
	for i, n := range s.NodeList {
		if n.Name != names[i] {
			t.Fatalf("node list out of order at %d: %s, want %s", i, n.Name, names[i])
		}
	}
	var ids []api.JobID
	for id := range s.Jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	jobs := s.JobList()
	if len(jobs) != len(ids) {
		t.Fatalf("job list has %d jobs, the map %d", len(jobs), len(ids))
	}
	var waiting []*api.JobInfo
	for i, j := range jobs {
		if j.UID != ids[i] || s.Jobs[j.UID] != j {
			t.Fatalf("job list at %d is %s, want the map's %s", i, j.UID, ids[i])
		}
		if j.Waits() {
			waiting = append(waiting, j)
		}
	}
	if !slices.Equal(s.WorkList(), waiting) {
		t.Fatalf("waiting jobs %v, want %v", jobIDs(s.WorkList()), jobIDs(waiting))
	}
	compareTotals(t, s.Totals(), api.ComputeTotals(s.NodeList, s.Jobs))
	// A task on a node is one object in its node and its job, so that a
	// change the cycle makes through either shows in both.
	for _, n := range s.NodeList {
		for uid, nt := range n.Tasks {
			if j := s.Jobs[nt.Job]; j != nil {
				if jt := j.Tasks[uid]; jt != nil && jt != nt {
					t.Fatalf("task %s: node %s and job %s (lent: %t) hold different copies", uid, n.Name, j.UID, s.Lent(j.UID))
				}
			}
		}
	}
}

func compareSnapshots(t *testing.T, got, want *api.Snapshot) {
	t.Helper()
	if len(got.Nodes) != len(want.Nodes) || len(got.Jobs) != len(want.Jobs) {
		t.Fatalf("%d nodes and %d jobs, want %d and %d", len(got.Nodes), len(got.Jobs), len(want.Nodes), len(want.Jobs))
	}
	for name, w := range want.Nodes {
		g := got.Nodes[name]
		if g == nil || !g.Used.Equal(w.Used) || !g.Idle.Equal(w.Idle) || !g.Allocatable.Equal(w.Allocatable) || len(g.Tasks) != len(w.Tasks) {
			t.Errorf("node %s: %+v, want %+v", name, g, w)
		}
	}
	for id, w := range want.Jobs {
		g := got.Jobs[id]
		if g == nil || g.Phase != w.Phase || !g.Allocated.Equal(w.Allocated) || !g.TotalRequest.Equal(w.TotalRequest) || len(g.Tasks) != len(w.Tasks) {
			t.Errorf("job %s: %+v, want %+v", id, g, w)
		}
	}
	compareTotals(t, got.Totals(), want.Totals())
}

func compareTotals(t *testing.T, got, want *api.Totals) {
	t.Helper()
	if !got.Allocatable.Equal(want.Allocatable) || !got.Used.Equal(want.Used) {
		t.Fatalf("totals: allocatable %s used %s, want %s and %s", got.Allocatable, got.Used, want.Allocatable, want.Used)
	}
	queues := map[api.QueueID]bool{}
	for id := range got.Queues {
		queues[id] = true
	}
	for id := range want.Queues {
		queues[id] = true
	}
	for id := range queues {
		g, w := got.Queue(id), want.Queue(id)
		if !g.Allocated.Equal(w.Allocated) || !g.Request.Equal(w.Request) || !g.InqueueMin.Equal(w.InqueueMin) || !g.InqueueNeeded.Equal(w.InqueueNeeded) || g.Phases != w.Phases {
			t.Fatalf("queue %s totals %+v, want %+v", id, g, w)
		}
	}
	for _, ns := range []string{"a", "b"} {
		if !got.Namespace(ns).Equal(want.Namespace(ns)) {
			t.Fatalf("namespace %s holds %s, want %s", ns, got.Namespace(ns), want.Namespace(ns))
		}
	}
}

func jobIDs(jobs []*api.JobInfo) []api.JobID {
	out := make([]api.JobID, len(jobs))
	for i, j := range jobs {
		out[i] = j.UID
	}
	return out
}

// TestMergeJobs drops and inserts jobs in a sorted list, a few at a time
// and many at once, and checks the result against sorting afresh.
func TestMergeJobs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	job := func(i int) *api.JobInfo { return api.NewJobInfo(api.JobID(fmt.Sprintf("ns/j%05d", i))) }
	for _, adds := range []int{0, 1, 5, 64, 65, 300} {
		var list []*api.JobInfo
		present := map[int]bool{}
		for i := 0; i < 1000; i += 2 {
			list = append(list, job(i))
			present[i] = true
		}
		var drop []int
		for i := range list {
			if r.IntN(10) == 0 {
				drop = append(drop, i)
				present[2*i] = false
			}
		}
		var add []*api.JobInfo
		for len(add) < adds {
			if i := 2*r.IntN(500) + 1; !present[i] {
				present[i] = true
				add = append(add, job(i))
			}
		}
		got := mergeJobs(list, drop, add)
		var want []api.JobID
		for i := range 1000 {
			if present[i] {
				want = append(want, api.JobID(fmt.Sprintf("ns/j%05d", i)))
			}
		}
		if !slices.Equal(jobIDs(got), want) {
			t.Errorf("%d added: got %v,\nwant %v", adds, jobIDs(got), want)
		}
	}
}
