//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/poll"
)

// burstReportGrace is caldera-global's --report-grace in the burst.
const burstReportGrace = 5 * time.Second

// TestFederationBurst: a burst of work over the two members, 8 CPUs each.
//
// First 40 small Jobs (one 100m pod each), which all fit at once: how
// fast caldera-global places them (create → placed, create → applied in
// the member, placements per second) is reported.
//
// Then 50 Jobs of one to four 1-CPU pods, running five seconds each, 125
// CPUs of work for 16, with Karmada's controllers restarted halfway (their
// detector re-applies every policy as it starts): no Job ever runs in a
// member other than the one caldera-global placed it in, or moves; no Job
// waits in a member for longer than the report grace while the other
// member has room for it; every Job completes.
func TestFederationBurst(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	f := startFederationWith(t, ctx, federationOptions{global: func(o *options.Options) { o.ReportGrace = burstReportGrace }}, "burst")
	kc := f.karmada
	const ns = "burst"
	if err := kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := kc.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "burst"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := kc.Create(ctx, jobPolicy(ns)); err != nil {
		t.Fatal(err)
	}
	w := newBurstWatch(f, ns)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go w.run(wctx)

	// Phase 1: placement speed.
	var small []string
	for i := range 40 {
		j := trainingJob(ns, fmt.Sprintf("small-%02d", i), "burst", 1)
		j.Spec.Tasks[0].Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(100, resource.DecimalSI)
		runFor(j, 2*time.Second)
		w.created(j.Name)
		if err := kc.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		small = append(small, j.Name)
	}
	poll.Eventually(t, ctx, 3*time.Minute, "the 40 small jobs applied in members", func() (bool, string) {
		n := w.count(small, func(j *burstJob) bool { return !j.applied.IsZero() })
		return n == len(small), fmt.Sprintf("%d applied", n)
	})
	t.Logf("burst numbers (%s): 40 small jobs: %s", f.plane.Name(), w.speed(small))

	// Phase 2: little room, a restart halfway.
	rng := rand.New(rand.NewPCG(21, 1))
	var mixed []string
	restarted := false
	for i := range 50 {
		pods := int32(1 + rng.IntN(4))
		j := runFor(trainingJob(ns, fmt.Sprintf("mixed-%02d", i), "burst", pods), 5*time.Second)
		w.created(j.Name)
		if err := kc.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		mixed = append(mixed, j.Name)
		if i%10 == 9 {
			// A burst arrives in waves.
			time.Sleep(time.Second)
		}
	}
	poll.Eventually(t, ctx, 10*time.Minute, "every mixed job completed", func() (bool, string) {
		done := w.count(mixed, func(j *burstJob) bool { return j.completed })
		if !restarted && done >= len(mixed)/3 {
			restarted = true
			t.Logf("restarting Karmada's controllers with %d of %d jobs completed", done, len(mixed))
			if err := f.plane.RestartControllers(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return done == len(mixed), fmt.Sprintf("%d of %d completed", done, len(mixed))
	})
	if !restarted {
		t.Errorf("Karmada's controllers were not restarted during the burst")
	}
	stopWatch()
	w.wait()
	for _, v := range w.violations() {
		t.Error(v)
	}
	t.Logf("burst numbers (%s): 50 mixed jobs over 16 CPUs: %s; longest wait in a member %v", f.plane.Name(), w.speed(mixed), w.longestMemberWait(mixed))
}

// burstJob is what the watch saw of one Job.
type burstJob struct {
	// created: the Job; bound: Karmada made its binding; placed:
	// caldera-global placed the binding; applied: Karmada applied it in
	// the member.
	created, bound, placed, applied time.Time
	// cluster is where caldera-global placed it.
	cluster string
	// member is where it was first seen in a member, seenAt when.
	member    string
	seenAt    time.Time
	runningAt time.Time
	completed bool
	// request is the Job's CPU request (milli).
	request int64
	// toldAt is when its wait was last found wrong.
	toldAt time.Time
}

// burstWatch follows the bindings on the Karmada API server and the Jobs
// in the members, and keeps what breaks the rules.
type burstWatch struct {
	f  *federation
	ns string

	mu   sync.Mutex
	jobs map[string]*burstJob
	bad  []string
	done chan struct{}
}

func newBurstWatch(f *federation, ns string) *burstWatch {
	return &burstWatch{f: f, ns: ns, jobs: map[string]*burstJob{}, done: make(chan struct{})}
}

func (w *burstWatch) created(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.jobs[name] = &burstJob{created: time.Now()}
}

func (w *burstWatch) count(names []string, ok func(*burstJob) bool) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, name := range names {
		if j := w.jobs[name]; j != nil && ok(j) {
			n++
		}
	}
	return n
}

func (w *burstWatch) violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.bad)
}

func (w *burstWatch) wait() { <-w.done }

// run polls until ctx ends, every 100 ms.
func (w *burstWatch) run(ctx context.Context) {
	defer close(w.done)
	for ctx.Err() == nil {
		w.poll(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (w *burstWatch) poll(ctx context.Context) {
	var rbs workv1alpha2.ResourceBindingList
	if err := w.f.karmada.List(ctx, &rbs, client.InNamespace(w.ns)); err != nil {
		return
	}
	members := map[string][]batchv1alpha1.Job{}
	pods := map[string][]corev1.Pod{}
	for name, mc := range w.f.members {
		var jobs batchv1alpha1.JobList
		var ps corev1.PodList
		if err := mc.List(ctx, &jobs, client.InNamespace(w.ns)); err != nil {
			return
		}
		if err := mc.List(ctx, &ps, client.InNamespace(w.ns)); err != nil {
			return
		}
		members[name], pods[name] = jobs.Items, ps.Items
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, rb := range rbs.Items {
		j := w.jobs[strings.TrimSuffix(rb.Name, "-job")]
		if j == nil {
			continue
		}
		if j.bound.IsZero() {
			j.bound = now
		}
		if len(rb.Spec.Clusters) == 0 {
			continue
		}
		cl := rb.Spec.Clusters[0].Name
		switch {
		case j.cluster == "":
			j.cluster, j.placed = cl, now
		case j.cluster != cl:
			w.bad = append(w.bad, fmt.Sprintf("%s moved from %s to %s", rb.Name, j.cluster, cl))
			j.cluster = cl
		}
		for _, s := range rb.Status.AggregatedStatus {
			if s.ClusterName == cl && s.Applied && j.applied.IsZero() {
				j.applied = now
			}
		}
	}
	// Free CPUs (milli) per member: 8 CPUs less what unfinished pods ask.
	free := map[string]int64{}
	for name, ps := range pods {
		free[name] = 8000
		for _, p := range ps {
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			free[name] -= p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
		}
	}
	for member, jobs := range members {
		for _, mj := range jobs {
			j := w.jobs[mj.Name]
			if j == nil {
				continue
			}
			switch {
			case j.member == "":
				j.member, j.seenAt = member, now
				for _, task := range mj.Spec.Tasks {
					j.request += int64(task.Replicas) * task.Template.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
				}
				if j.cluster != "" && j.cluster != member {
					w.bad = append(w.bad, fmt.Sprintf("%s runs in %s, placed in %s", mj.Name, member, j.cluster))
				}
			case j.member != member:
				w.bad = append(w.bad, fmt.Sprintf("%s in %s and in %s", mj.Name, j.member, member))
			}
			switch mj.Status.State.Phase {
			case batchv1alpha1.JobRunning:
				if j.runningAt.IsZero() {
					j.runningAt = now
				}
			case batchv1alpha1.JobCompleted:
				if j.runningAt.IsZero() {
					j.runningAt = now
				}
				j.completed = true
			}
			if j.runningAt.IsZero() && !j.completed && now.Sub(j.seenAt) > burstReportGrace && now.Sub(j.toldAt) > burstReportGrace {
				for other, room := range free {
					if other != member && room >= j.request {
						w.bad = append(w.bad, fmt.Sprintf("%s waited %v in %s while %s had %dm CPU free", mj.Name, now.Sub(j.seenAt).Round(time.Millisecond), member, other, room))
						j.toldAt = now
					}
				}
			}
		}
	}
}

// burstSpeed is how fast a set of jobs went: p50 and p99 of each step.
type burstSpeed struct {
	// bound: create → binding (Karmada); placed: binding → placed
	// (caldera-global); applied: placed → applied in the member (Karmada);
	// total: create → applied.
	bound, placed, applied, total [2]time.Duration
	// rate is placements per second from the first creation to the last
	// placement, and arrivals the Jobs created per second by the test.
	rate, arrivals float64
}

func (s burstSpeed) String() string {
	return fmt.Sprintf("create→binding p50 %v p99 %v; binding→placed p50 %v p99 %v; placed→applied p50 %v p99 %v; create→applied p50 %v p99 %v; %.1f placements/s, %.1f Jobs created/s",
		s.bound[0], s.bound[1], s.placed[0], s.placed[1], s.applied[0], s.applied[1], s.total[0], s.total[1], s.rate, s.arrivals)
}

// speed measures the jobs named.
func (w *burstWatch) speed(names []string) burstSpeed {
	w.mu.Lock()
	defer w.mu.Unlock()
	var bound, placed, applied, total []time.Duration
	var first, last, lastCreated time.Time
	for _, name := range names {
		j := w.jobs[name]
		if j == nil || j.placed.IsZero() || j.bound.IsZero() {
			continue
		}
		if j.created.After(lastCreated) {
			lastCreated = j.created
		}
		bound = append(bound, j.bound.Sub(j.created))
		placed = append(placed, j.placed.Sub(j.bound))
		if !j.applied.IsZero() {
			applied = append(applied, j.applied.Sub(j.placed))
			total = append(total, j.applied.Sub(j.created))
		}
		if first.IsZero() || j.created.Before(first) {
			first = j.created
		}
		if j.placed.After(last) {
			last = j.placed
		}
	}
	s := burstSpeed{bound: percentiles(bound), placed: percentiles(placed), applied: percentiles(applied), total: percentiles(total)}
	if span := last.Sub(first).Seconds(); span > 0 {
		s.rate = float64(len(placed)) / span
	}
	if span := lastCreated.Sub(first).Seconds(); span > 0 {
		s.arrivals = float64(len(placed)) / span
	}
	return s
}

func (w *burstWatch) longestMemberWait(names []string) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var longest time.Duration
	for _, name := range names {
		if j := w.jobs[name]; j != nil && !j.runningAt.IsZero() && !j.seenAt.IsZero() {
			longest = max(longest, j.runningAt.Sub(j.seenAt))
		}
	}
	return longest.Round(time.Millisecond)
}

// percentiles are the p50 and p99 of ds, to the millisecond.
func percentiles(ds []time.Duration) [2]time.Duration {
	if len(ds) == 0 {
		return [2]time.Duration{}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(q float64) time.Duration {
		return ds[min(len(ds)-1, int(q*float64(len(ds))))].Round(time.Millisecond)
	}
	return [2]time.Duration{at(0.50), at(0.99)}
}
