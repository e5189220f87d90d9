package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/google/go-cmp/cmp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

const contendConfig = `actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: cdp
- plugins:
  - name: drf
  - name: capacity
  - name: binpack
`

// TestContendingQueuesDoNotLoop: two queues deserving half of a 64-CPU
// cluster each take turns being busy for 24 simulated hours, with
// overlapping busy spells; idle capacity is lent, and taken back by
// reclaim when the owner gets busy. An evicted pod is submitted again with
// the work it has left, as a job controller would. Evictions stay bounded
// by the work that arrives: reclaim only serves a queue below its share,
// and no pod's work is evicted over and over.
func TestContendingQueuesDoNotLoop(t *testing.T) {
	run := contend(t, 24*time.Hour)
	c, start, busy, evictions, evictedAt, fresh, resubmitted := run.c, run.start, run.busy, run.evictions, run.evictedAt, run.fresh, run.resubmitted
	stats := c.Stats()
	worst, worstPod := 0, ""
	for pod, n := range evictions {
		if n > worst {
			worst, worstPod = n, pod
		}
	}
	// Settled overlap: both queues have been busy for half an hour, so
	// their shares have been taken back. What evictions remain correct
	// the small overshoots that pod completions leave (a queue just under
	// its share fills a hole its sibling's larger pods do not fit, then
	// gives back when the sibling falls short); taking room back and forth
	// would instead evict continuously.
	settled := 0
	var settledTime time.Duration
	inSettled := func(at time.Time) bool {
		return busy("a", at) && busy("b", at) && busy("a", at.Add(-30*time.Minute)) && busy("b", at.Add(-30*time.Minute))
	}
	for _, at := range evictedAt {
		if inSettled(at) {
			settled++
		}
	}
	for at := start; at.Before(start.Add(24 * time.Hour)); at = at.Add(time.Minute) {
		if inSettled(at) {
			settledTime += time.Minute
		}
	}
	// A queue that turns busy takes back at most its deserved 32 CPUs, one
	// CPU or more per eviction.
	starts := 0
	for at := start; at.Before(start.Add(24 * time.Hour)); at = at.Add(30 * time.Minute) {
		for _, q := range []string{"a", "b"} {
			if busy(q, at) && !busy(q, at.Add(-30*time.Minute)) {
				starts++
			}
		}
	}
	t.Logf("24h: %d cycles, %d pods submitted (%d again after eviction), %d binds, %d completions, %d evictions (%d in %v while both queues were settled in); %d times a queue turned busy; at most %d evictions of one pod's work (%s)",
		stats.Cycles, fresh, resubmitted, stats.Binds, stats.Completions, stats.Evictions, settled, settledTime, starts, worst, worstPod)
	if stats.Evictions == 0 {
		t.Fatal("no evictions: the queues never contended, the test proves nothing")
	}
	if limit := starts * 32; stats.Evictions > limit {
		t.Errorf("%d evictions, more than the %d CPUs that %d queues turning busy can take back", stats.Evictions, limit, starts)
	}
	if perHour := float64(settled) / settledTime.Hours(); perHour > 6 {
		t.Errorf("%d evictions in %v while both queues held their shares (%.1f an hour): they take room back and forth", settled, settledTime, perHour)
	}
	if worst > 3 {
		t.Errorf("the work of %s was evicted %d times", worstPod, worst)
	}
}

func jobPod(name, job, cpu string) *corev1.Pod {
	return st.MakePod("ns", name).Req("cpu", cpu, "memory", "1Gi").Group(job).Obj()
}

// poisson draws from a Poisson distribution of mean lambda (Knuth's
// method, fine for the small means used here).
func poisson(r *rand.Rand, lambda float64) int {
	limit, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= r.Float64()
		if p <= limit {
			return k
		}
		k++
	}
}

// contention is a run of the contending-queues scenario.
type contention struct {
	c     *Cluster
	start time.Time
	busy  func(queue string, at time.Time) bool
	// evictions counts evictions per piece of work; evictedAt holds when
	// each eviction was made.
	evictions          map[string]int
	evictedAt          []time.Time
	fresh, resubmitted int
}

// contendProfile builds contendConfig's actions and plugins.
func contendProfile(t *testing.T) *profile.Profile {
	t.Helper()
	cfg, err := config.Load([]byte(contendConfig), profile.NameRegistry())
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profile.Build(cfg, &framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	return prof
}

// contend runs the scenario of TestContendingQueuesDoNotLoop for d.
func contend(t *testing.T, d time.Duration) *contention {
	t.Helper()
	prof := contendProfile(t)
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// lineage maps every pod to the first pod of its work; evictions
	// counts evictions per lineage.
	lineage := map[string]string{}
	evictions := map[string]int{}
	// runtimes holds how long each submitted pod runs.
	runtimes := map[string]time.Duration{}
	var evictedAt []time.Time
	var resubmitted int
	c := New(Options{
		Actions: prof.Actions, Tiers: prof.Tiers, Start: start, EvictionGrace: 30 * time.Second,
		OnEvicted: func(c *Cluster, pod *corev1.Pod, ran time.Duration) {
			root := lineage[pod.Name]
			evictions[root]++
			evictedAt = append(evictedAt, pod.DeletionTimestamp.Time)
			left := runtimes[pod.Name] - ran
			if left <= 0 {
				return
			}
			resubmitted++
			again := fmt.Sprintf("%s-r%d", root, evictions[root])
			lineage[again] = root
			runtimes[again] = left
			c.AddPod(jobPod(again, root, pod.Spec.Containers[0].Resources.Requests.Cpu().String()), left)
		},
	})
	for i := range 8 {
		c.AddNode(st.MakeNode(fmt.Sprintf("n%d", i)).Alloc("cpu", "8", "memory", "64Gi").Obj())
	}
	for _, q := range []string{"a", "b"} {
		c.AddQueue(schedtesting.MakeQueue(q).Deserved(schedtesting.Resources("cpu", "32")).Obj())
	}

	r := rand.New(rand.NewPCG(42, 1))
	fresh := 0
	// Queue a is busy for three hours out of every four, b for three out
	// of four an hour and a half later: they overlap for two hours at a
	// time and take turns in between.
	busy := func(q string, now time.Time) bool {
		h := now.Sub(start).Hours()
		if q == "b" {
			h -= 1.5
		}
		return h >= 0 && int(h)%4 != 3
	}
	lastMinute := start.Add(-time.Minute)
	submit := func(now time.Time) {
		if now.Sub(lastMinute) < time.Minute {
			return
		}
		lastMinute = now
		for _, q := range []string{"a", "b"} {
			// Busy, a queue asks for about 1.5 times its share (pods of
			// 2.5 CPUs for 25 minutes on average).
			rate := 0.1
			if busy(q, now) {
				rate = 0.75
			}
			for n := poisson(r, rate); n > 0; n-- {
				name := fmt.Sprintf("%s-%05d", q, fresh)
				fresh++
				lineage[name] = name
				runtimes[name] = time.Duration(10+r.IntN(31)) * time.Minute
				// One job per piece of work, as a Volcano Job: a pod
				// evicted from it comes back in the same job.
				c.AddPodGroup(schedtesting.MakePodGroup(name, "ns").Queue(q).MinMember(1).Obj())
				c.AddPod(jobPod(name, name, fmt.Sprint(1+r.IntN(4))), runtimes[name])
			}
		}
	}
	c.RunFor(t.Context(), d, 30*time.Second, submit)
	return &contention{c: c, start: start, busy: busy, evictions: evictions, evictedAt: evictedAt, fresh: fresh, resubmitted: resubmitted}
}

// TestSimulationIsDeterministic: the same scenario run twice ends with
// every pod in the same place and state, after the same counts.
func TestSimulationIsDeterministic(t *testing.T) {
	state := func() (Stats, []string) {
		run := contend(t, 4*time.Hour)
		var pods []string
		for _, p := range run.c.Pods() {
			pods = append(pods, fmt.Sprintf("%s %s %s %v", p.Name, p.Spec.NodeName, p.Status.Phase, p.DeletionTimestamp != nil))
		}
		return run.c.Stats(), pods
	}
	firstStats, first := state()
	secondStats, second := state()
	if firstStats.Evictions == 0 {
		t.Fatal("no evictions in the first hours: the runs do not exercise reclaim")
	}
	if diff := cmp.Diff(firstStats, secondStats); diff != "" {
		t.Errorf("stats (-first,+second):\n%s", diff)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("pods (-first,+second):\n%s", diff)
	}
}
