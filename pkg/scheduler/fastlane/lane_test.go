package fastlane_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/cache"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/fastlane"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
	"github.com/caldera-sh/caldera/test/poll"
)

// apiServer stands in for the binds' round trip: each placement the cache
// accepts is shown back to it as a bound, running pod, as the pod informer
// would. It records every pod bound, to find one bound twice.
type apiServer struct {
	c    *cache.Cache
	pods map[string]*corev1.Pod

	mu     sync.Mutex
	bound  map[string]string
	twice  []string
	placed chan struct{}
}

func (a *apiServer) BindGroup(ps []api.Placement) error {
	if err := a.c.AssumeGroup(ps); err != nil {
		return err
	}
	for _, p := range ps {
		a.bind(p.Task, p.Node)
	}
	return nil
}

func (a *apiServer) Bind(t *api.TaskInfo, node string) {
	panic("the fast lane and the cycle bind groups, checked")
}

func (a *apiServer) bind(t *api.TaskInfo, node string) {
	a.mu.Lock()
	if _, ok := a.bound[t.Name]; ok {
		a.twice = append(a.twice, t.Name)
	}
	a.bound[t.Name] = node
	pod := a.pods[t.Name].DeepCopy()
	a.mu.Unlock()
	pod.Spec.NodeName = node
	pod.Status.Phase = corev1.PodRunning
	go func() {
		a.c.UpdatePod(pod)
		a.placed <- struct{}{}
	}()
}

func tiers(t *testing.T) []framework.Tier { return build(t).Tiers }

func build(t *testing.T) *profile.Profile {
	t.Helper()
	cfg, err := config.Load([]byte(`actions: "allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: proportion
  - name: binpack
`), profile.NameRegistry())
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Build(cfg, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The fast lane's two workers and the scheduling cycle place pods on the
// same nodes at once, each on snapshots of its own, with more pods than
// room: every slot is taken once, no node holds more than it has, and no
// pod is bound twice. Run with -race, the loops also share no state
// unguarded.
func TestLanesNeverOvercommitANode(t *testing.T) {
	const nodes, slots = 8, 4
	c := cache.New(cache.Options{FastLane: cache.FastLaneSelector{SchedulerNames: []string{"fast"}}})
	c.UpdateQueue(schedtesting.MakeQueue("default").Obj())
	for i := range nodes {
		c.UpdateNode(st.MakeNode(fmt.Sprintf("n%d", i)).Alloc("cpu", fmt.Sprint(slots), "pods", "110").Obj())
	}
	srv := &apiServer{c: c, pods: map[string]*corev1.Pod{}, bound: map[string]string{}, placed: make(chan struct{}, 1000)}
	var pods []*corev1.Pod
	for i := range 30 {
		pods = append(pods, st.MakePod("ns", fmt.Sprintf("fast-%02d", i)).SchedulerName("fast").Req("cpu", "1").Obj())
		pods = append(pods, st.MakePod("ns", fmt.Sprintf("batch-%02d", i)).Req("cpu", "1").Obj())
	}
	// A pod that requests nothing (placed by backfill) fits anywhere.
	pods = append(pods, st.MakePod("ns", "fast-besteffort").SchedulerName("fast").Obj())
	for _, p := range pods {
		srv.pods[p.Name] = p
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var sched *scheduler.Scheduler
	var lane *fastlane.Lane
	sched = scheduler.New(c, scheduler.Options{Actions: build(t).Actions, Tiers: tiers(t), Binder: srv, Heartbeat: 20 * time.Millisecond})
	lane = fastlane.New(c, fastlane.Options{Tiers: [][]framework.Tier{tiers(t), tiers(t)}, Binder: srv, Retry: 20 * time.Millisecond})
	var loops sync.WaitGroup
	loops.Go(func() { sched.Run(ctx) })
	loops.Go(func() { lane.Run(ctx) })
	// The pods arrive while the loops run.
	for _, p := range pods {
		c.UpdatePod(p)
		sched.Notify()
		lane.Notify()
	}
	for range nodes*slots + 1 {
		select {
		case <-srv.placed:
		case <-time.After(30 * time.Second):
			t.Fatalf("only some of the %d slots were taken: %d pods bound", nodes*slots, len(srv.bound))
		}
	}
	// Every slot is taken: the cache's state, as the next snapshot sees
	// it, shows every node full and none over. (The cycle's view is only
	// read once the cycle stopped.)
	cancel()
	loops.Wait()
	snap := c.Snapshot()
	for _, n := range snap.NodeList {
		if n.Used.MilliCPU != slots*1000 {
			t.Errorf("node %s uses %dm cpu, want %dm (full, not over)", n.Name, n.Used.MilliCPU, slots*1000)
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.twice) > 0 {
		t.Errorf("pods bound twice: %v", srv.twice)
	}
	if len(srv.bound) != nodes*slots+1 {
		t.Errorf("%d pods bound, want %d", len(srv.bound), nodes*slots+1)
	}
	if _, ok := srv.bound["fast-besteffort"]; !ok {
		t.Error("the fast-lane pod that requests nothing was not bound")
	}
	fast := 0
	for name := range srv.bound {
		if name[:4] == "fast" {
			fast++
		}
	}
	if fast == 0 || fast == len(srv.bound) {
		t.Errorf("%d of %d bound pods are the fast lane's: both loops should have placed some", fast, len(srv.bound))
	}
}

// A fast-lane pod that fits no node is explained as a cycle's job is:
// /debug/jobs/ shows why it waits.
func TestAnUnplaceablePodIsExplained(t *testing.T) {
	c := cache.New(cache.Options{FastLane: cache.FastLaneSelector{SchedulerNames: []string{"fast"}}})
	c.UpdateQueue(schedtesting.MakeQueue("default").Obj())
	c.UpdateNode(st.MakeNode("n0").Alloc("cpu", "4", "pods", "110").Obj())
	srv := &apiServer{c: c, pods: map[string]*corev1.Pod{}, bound: map[string]string{}, placed: make(chan struct{}, 10)}
	sched := scheduler.New(c, scheduler.Options{Actions: build(t).Actions, Tiers: tiers(t), Binder: srv})
	lane := fastlane.New(c, fastlane.Options{Tiers: [][]framework.Tier{tiers(t)}, Binder: srv, Explain: sched.RecordOutcomes, Retry: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go lane.Run(ctx)
	big := st.MakePod("ns", "big").SchedulerName("fast").Req("cpu", "8").Obj()
	c.UpdatePod(big)
	lane.Notify()
	job := api.JobIDOfPod(big)
	name := strings.TrimPrefix(string(job), "ns/")
	var x scheduler.Explanation
	poll.Eventually(t, ctx, 30*time.Second, "an explanation of "+string(job), func() (bool, string) {
		var ok bool
		x, ok = sched.Explain("ns", name)
		return ok, "none yet"
	})
	if len(x.Blockers) == 0 || !strings.Contains(x.Blockers[0].Message, "task big") {
		t.Errorf("explanation %+v, want a blocker naming task big", x)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.bound) != 0 {
		t.Errorf("bound %v, want nothing", srv.bound)
	}
}
