//go:build chaos

// Package chaos injects faults into a member cluster under a steady mixed
// load and checks, after every fault, that nothing was lost, duplicated or
// overcommitted, and how long the cluster took to recover
// (docs/reliability.md).
//
//	go test -tags chaos ./test/chaos/                                  # short: each fault once
//	go test -tags chaos -timeout 3h ./test/chaos/ -args -chaos.profile=long -chaos.report=chaos.md
package chaos

import (
	"bufio"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/localenv"
	"github.com/caldera-sh/caldera/test/poll"
)

var (
	profile   = flag.String("chaos.profile", "short", "short: every fault once (make test); long: every fault -chaos.repeat times")
	repeat    = flag.Int("chaos.repeat", 20, "how often the long profile injects each fault")
	seed      = flag.Uint64("chaos.seed", 0, "the random seed (0: from the clock; the run logs it)")
	report    = flag.String("chaos.report", "", "write the figures, as Markdown, to this file")
	only      = flag.String("chaos.faults", "", "inject only the faults whose name matches this regular expression")
	keepDir   = flag.String("chaos.dir", "", "run the environment in this directory and keep it (every log, the audit) after the run")
	verbosity = flag.Int("chaos.v", 7, "the components' log level, so that the log scan sees what a raised level writes")
)

// Limits of the run. A gang may be partly bound for gangGrace (a gang
// whose pods are being replaced after an eviction is, briefly); the
// scheduler's queue status may trail the pods by accountingGrace: after an
// API server or etcd restart a component's informers wait out client-go's
// watch back-off, which after repeated failures within two minutes is up
// to 60 s (30 s and as much again of jitter).
const (
	gangGrace       = 30 * time.Second
	accountingGrace = 90 * time.Second
	recoveryTimeout = 2 * time.Minute
	drainTimeout    = 5 * time.Minute
)

// figures are what the run measured of one kind of fault.
type figures struct {
	injected, recovered int
	ready, resumed      []time.Duration
}

func TestChaos(t *testing.T) {
	s, rng, plan := faultPlan(t, faults, func(f fault) string { return f.name }, 0xc4a05)

	ctx := t.Context()
	e := startEnv(t, ctx)
	if err := e.client.Create(ctx, probeQueue()); err != nil {
		t.Fatal(err)
	}
	obs, err := startObserver(ctx, e, gangGrace)
	if err != nil {
		t.Fatal(err)
	}
	// kwok plays a pod's stage once; the resync plays again what a fault
	// made it drop, as a kubelet would (resync_test.go).
	rs := newResyncer(e.client)
	rsCtx, stopResync := context.WithCancel(ctx)
	rsDone := make(chan struct{})
	go func() { defer close(rsDone); rs.run(rsCtx, "default", 5*time.Second, t.Logf) }()
	defer func() { stopResync(); <-rsDone }()
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	l := newLoad(e.client, s, 700*time.Millisecond, 40)
	loadDone := make(chan struct{})
	go func() { defer close(loadDone); l.run(loadCtx) }()
	// The gang check runs every second for the whole run.
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-loadCtx.Done():
				return
			case now := <-tick.C:
				_ = obs.checkGangs(ctx, now)
			}
		}
	}()

	started := time.Now()
	got := map[string]*figures{}
	for i, f := range plan {
		// A random point: 3 to 10 s into the load since the last fault.
		time.Sleep(time.Duration(3000+rng.IntN(7000)) * time.Millisecond)
		fig := got[f.name]
		if fig == nil {
			fig = &figures{}
			got[f.name] = fig
		}
		fig.injected++
		// Faults need work to act on: a load that stopped submitting is
		// the harness's failure, said as such.
		if why := l.stalled(time.Minute); why != "" {
			t.Fatalf("before fault %d (%s): %s", i, f.name, why)
		}
		at := time.Now()
		ready, err := f.inject(ctx, e, rng)
		if err != nil {
			t.Fatalf("fault %d (%s): %v", i, f.name, err)
		}
		resumed, err := probe(ctx, e, fmt.Sprintf("probe-%03d", i), at)
		if err != nil {
			t.Fatalf("fault %d (%s): work did not resume: %v", i, f.name, err)
		}
		fig.ready = append(fig.ready, ready)
		fig.resumed = append(fig.resumed, resumed)
		fig.recovered++
		t.Logf("fault %d/%d %s: ready in %s, a new pod bound %s after the fault", i+1, len(plan), f.name, ready.Round(time.Millisecond), resumed.Round(time.Millisecond))
		checkInvariants(t, ctx, e, obs, l, f.name)
	}

	if token, err := e.metricsToken(ctx); err == nil {
		t.Logf("the scheduler's count of queue allocations after the faults: %s", schedulerAllocations(ctx, e, token))
	}

	// The load stops; every job it submitted finishes.
	stopLoad()
	<-loadDone
	submitted, refused := l.snapshot()
	var open []string
	// seenDone are the jobs this drain has seen Completed: past their TTL
	// they are deleted, and must not then count as lost.
	seenDone := map[string]bool{}
	err = poll.Until(ctx, drainTimeout, "every submitted job Completed", func() (bool, string) {
		var jobs batchv1alpha1.JobList
		if err := e.client.List(ctx, &jobs, client.InNamespace("default"), client.HasLabels{loadLabel}); err != nil {
			return false, err.Error()
		}
		phase := map[string]batchv1alpha1.JobPhase{}
		for _, j := range jobs.Items {
			phase[j.Name] = j.Status.State.Phase
		}
		open = open[:0]
		for _, name := range submitted {
			p, ok := phase[name]
			if p == batchv1alpha1.JobCompleted {
				seenDone[name] = true
			}
			if !ok && (seenDone[name] || l.completed(name)) {
				// Deleted after its TTL, once seen Completed.
				continue
			}
			if !ok {
				t.Errorf("job %s lost", name)
				return true, ""
			}
			if p != batchv1alpha1.JobCompleted {
				open = append(open, name+"="+string(p))
			}
		}
		return len(open) == 0, fmt.Sprintf("%d of %d not Completed: %s", len(open), len(submitted), strings.Join(first(open, 10), " "))
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, describeJobs(ctx, e, open, 3))
	}
	checkInvariants(t, ctx, e, obs, l, "the end")
	checkOneGroupPerJob(t, ctx, e)
	checkLogsHoldNoSecrets(t, e.Dir, e.readerTokens...)
	elapsed := time.Since(started)

	md := render(got, obs.Violations(), len(submitted), refused, obs.Bound(), elapsed, s, *profile, rs.summary())
	t.Logf("figures:\n%s", md)
	if *report != "" {
		if err := os.WriteFile(*report, []byte(md), 0o644); err != nil {
			t.Error(err)
		}
	}
	for _, v := range obs.Violations() {
		t.Errorf("invariant broken: %s", v)
	}
}

// probeQueue holds the probes: room for them whatever the load does.
func probeQueue() *schedulingv1beta1.Queue {
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "chaos-probe"}, Spec: schedulingv1beta1.QueueSpec{
		Capability: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}}
	schedulingv1beta1.SetDefaults_Queue(q)
	return q
}

// probe creates a small pod of its own queue (retrying while admission
// refuses, as a client does) and returns how long after since it was seen
// bound: the time work took to resume after a fault. It goes through the
// webhook, the PodGroup controller and the scheduler.
func probe(ctx context.Context, e *env, name string, since time.Time) (time.Duration, error) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Annotations: map[string]string{
			schedulingv1beta1.QueueNameAnnotation: "chaos-probe", RunDurationAnnotation: "1s",
		}},
		Spec: corev1.PodSpec{SchedulerName: "volcano", RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
			Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("16Mi"),
			}},
		}}},
	}
	var untrusted error
	err := poll.Until(ctx, recoveryTimeout, "the probe "+name+" created", func() (bool, string) {
		err := e.client.Create(ctx, p.DeepCopy())
		if err != nil && strings.Contains(err.Error(), "x509") {
			untrusted = err
			return true, ""
		}
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
	})
	if err == nil && untrusted != nil {
		err = fmt.Errorf("the API server did not trust the webhook: %w", untrusted)
	}
	if err != nil {
		return 0, err
	}
	// Asked of the API server, not of an informer that may itself be
	// waiting out a watch back-off.
	var bound time.Time
	err = poll.Until(ctx, recoveryTimeout, "the probe "+name+" bound", func() (bool, string) {
		var got corev1.Pod
		if err := e.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &got); err != nil {
			return false, err.Error()
		}
		bound = time.Now()
		return got.Spec.NodeName != "", "not bound"
	})
	if err != nil {
		return 0, err
	}
	return max(bound.Sub(since), 0), nil
}

// readerClient reads the components' metrics endpoints, whose
// certificates are self-signed.
var readerClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// readerGet GETs a metrics endpoint with the metrics reader's token.
func readerGet(ctx context.Context, u, token string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return readerClient.Do(req)
}

// schedulerAllocations returns the scheduler's own count of each queue's
// allocated CPU, from its metrics, as "queue=millicores ...".
func schedulerAllocations(ctx context.Context, e *env, token string) string {
	resp, err := readerGet(ctx, e.MetricsURLs[localenv.ComponentScheduler], token)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.Status
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := allocatedCPU.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, m[1]+"="+m[2]+"m")
		}
	}
	return strings.Join(out, " ")
}

var allocatedCPU = regexp.MustCompile(`^volcano_queue_allocated_milli_cpu\{queue_name="([^"]+)"\} (\S+)$`)

// checkInvariants fails the test on any broken invariant after a fault:
// every component ready, no node overcommitted, every queue's allocation
// that of its bound pods (within the grace), and nothing the observer saw
// (pods moved, gangs left partly bound).
func checkInvariants(t *testing.T, ctx context.Context, e *env, obs *observer, l *load, after string) {
	t.Helper()
	hc := &http.Client{Timeout: 2 * time.Second}
	for _, name := range e.ComponentNames() {
		u := e.Component(name).ReadyURL()
		if u == "" {
			continue
		}
		resp, err := hc.Get(u)
		if err != nil {
			t.Errorf("after %s: %s not ready: %v", after, name, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("after %s: %s not ready: %s", after, name, resp.Status)
		}
	}
	// Each metrics endpoint serves the metrics reader again over HTTPS
	// (its reviews go through the API server, which may still be warming
	// up after a restart).
	token, err := e.metricsToken(ctx)
	if err != nil {
		t.Errorf("after %s: a metrics reader token: %v", after, err)
	}
	for name, u := range e.MetricsURLs {
		poll.Eventually(t, ctx, 30*time.Second, "after "+after+": "+name+" serving its metrics to the reader", func() (bool, string) {
			resp, err := readerGet(ctx, u, token)
			if err != nil {
				return false, err.Error()
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, resp.Status
		})
	}
	if err := obs.checkCapacity(ctx); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, ctx, accountingGrace, "after "+after+": queue allocations equal to their bound pods", func() (bool, string) {
		diff, err := obs.queueAccounting(ctx)
		if err != nil {
			return false, err.Error()
		}
		if diff == "" {
			return true, ""
		}
		// What the scheduler itself counts tells a stale cache (its count
		// differs from the pods too) from a status not written (its count
		// is right).
		return false, diff + "\nthe scheduler counts (volcano_queue_allocated_milli_cpu): " + schedulerAllocations(ctx, e, token)
	})
	for _, v := range obs.Violations() {
		t.Errorf("after %s: invariant broken: %s", after, v)
	}
	for _, u := range l.Untrusted() {
		t.Errorf("after %s: the API server did not trust the webhook: %s", after, u)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// checkOneGroupPerJob: no job has more than one PodGroup (a finished job
// has none left), and none more pods than its tasks' replicas.
func checkOneGroupPerJob(t *testing.T, ctx context.Context, e *env) {
	t.Helper()
	var jobs batchv1alpha1.JobList
	if err := e.client.List(ctx, &jobs, client.InNamespace("default"), client.HasLabels{loadLabel}); err != nil {
		t.Fatal(err)
	}
	var pgs schedulingv1beta1.PodGroupList
	if err := e.client.List(ctx, &pgs, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	groups := map[string]int{}
	for _, pg := range pgs.Items {
		for _, o := range pg.OwnerReferences {
			if o.Kind == "Job" {
				groups[string(o.UID)]++
			}
		}
	}
	var pods corev1.PodList
	if err := e.client.List(ctx, &pods, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	podsOf := map[string]int32{}
	for _, p := range pods.Items {
		for _, o := range p.OwnerReferences {
			if o.Kind == "Job" {
				podsOf[string(o.UID)]++
			}
		}
	}
	for _, j := range jobs.Items {
		// A finished job's PodGroup is deleted with it done; none has two.
		if n := groups[string(j.UID)]; n > 1 {
			t.Errorf("job %s has %d PodGroups, want at most 1", j.Name, n)
		}
		var replicas int32
		for _, task := range j.Spec.Tasks {
			replicas += task.Replicas
		}
		if n := podsOf[string(j.UID)]; n > replicas {
			t.Errorf("job %s has %d pods, more than its %d replicas", j.Name, n, replicas)
		}
	}
}

// render writes the figures as docs/reliability.md's table.
func render(got map[string]*figures, violations []string, submitted, refused, bound int, elapsed time.Duration, seed uint64, profile string, notes ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Profile %s, seed %d, %s: %d jobs submitted (%d creates refused and retried), %d pods bound, all jobs Completed.\n\n",
		profile, seed, elapsed.Round(time.Second), submitted, refused, bound)
	b.WriteString("| Fault | Injected | Recovered | Ready (median / worst) | Work resumed (median / worst) |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	names := make([]string, 0, len(got))
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := got[n]
		fmt.Fprintf(&b, "| %s | %d | %d | %s / %s | %s / %s |\n", n, f.injected, f.recovered,
			median(f.ready), worst(f.ready), median(f.resumed), worst(f.resumed))
	}
	if len(watchOutcomes) > 0 {
		var parts []string
		for _, o := range []string{watchAnsweredTooOld, watchListedAfresh} {
			parts = append(parts, fmt.Sprintf("%s %d times", o, watchOutcomes[o]))
		}
		fmt.Fprintf(&b, "\nWatch too old: the component's informers %s.\n", strings.Join(parts, "; "))
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	fmt.Fprintf(&b, "\nInvariant violations: %d\n", len(violations))
	for _, v := range violations {
		fmt.Fprintf(&b, "- %s\n", v)
	}
	return b.String()
}

func median(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(10 * time.Millisecond).String()
}

func worst(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	return slices.Max(ds).Round(10 * time.Millisecond).String()
}

// faultPlan returns the run's seed (logged, for a rerun), its random
// source (the seed and salt) and the faults to inject, in a random order:
// each of all that -chaos.faults matches, -chaos.repeat times in the long
// profile, once in the short.
func faultPlan[F any](t *testing.T, all []F, name func(F) string, salt uint64) (uint64, *rand.Rand, []F) {
	t.Helper()
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -chaos.seed=%d)", s, s)
	rng := rand.New(rand.NewPCG(s, salt))
	times := 1
	if *profile == "long" {
		times = *repeat
	} else if *profile != "short" {
		t.Fatalf("-chaos.profile=%q: want short or long", *profile)
	}
	match, err := regexp.Compile(*only)
	if err != nil {
		t.Fatalf("-chaos.faults: %v", err)
	}
	var plan []F
	for range times {
		for _, f := range all {
			if match.MatchString(name(f)) {
				plan = append(plan, f)
			}
		}
	}
	if len(plan) == 0 {
		skipUnlessNoFaultMatches(t, match)
	}
	rng.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	return s, rng, plan
}

// skipUnlessNoFaultMatches skips a test none of whose faults -chaos.faults
// matches, unless it matches no fault of either test.
func skipUnlessNoFaultMatches(t *testing.T, match *regexp.Regexp) {
	t.Helper()
	for _, f := range faults {
		if match.MatchString(f.name) {
			t.Skipf("-chaos.faults=%q matches only member faults", *only)
		}
	}
	for _, f := range fedFaults {
		if match.MatchString(f.name) {
			t.Skipf("-chaos.faults=%q matches only federation faults", *only)
		}
	}
	t.Fatalf("-chaos.faults=%q matches no fault", *only)
}

// describeJobs says, for the first n of the named "name=phase" jobs, what
// their PodGroup and pods are: what a job left unfinished is waiting on.
func describeJobs(ctx context.Context, e *env, named []string, n int) string {
	var b strings.Builder
	for _, np := range first(named, n) {
		name, _, _ := strings.Cut(np, "=")
		var pg schedulingv1beta1.PodGroupList
		if err := e.client.List(ctx, &pg, client.InNamespace("default")); err != nil {
			fmt.Fprintf(&b, "job %s: %v\n", name, err)
			continue
		}
		for _, g := range pg.Items {
			for _, o := range g.OwnerReferences {
				if o.Kind == "Job" && o.Name == name {
					fmt.Fprintf(&b, "job %s: PodGroup %s phase %s running %d succeeded %d failed %d conditions %v\n",
						name, g.Name, g.Status.Phase, g.Status.Running, g.Status.Succeeded, g.Status.Failed, g.Status.Conditions)
				}
			}
		}
		var pods corev1.PodList
		if err := e.client.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels{batchv1alpha1.JobNameKey: name}); err != nil {
			fmt.Fprintf(&b, "job %s: %v\n", name, err)
			continue
		}
		for _, p := range pods.Items {
			del := ""
			if p.DeletionTimestamp != nil {
				del = " deleting since " + p.DeletionTimestamp.Format(time.RFC3339)
			}
			fmt.Fprintf(&b, "  pod %s uid %s created %s node %q phase %s started %v%s\n", p.Name, p.UID,
				p.CreationTimestamp.Format(time.RFC3339), p.Spec.NodeName, p.Status.Phase, p.Status.StartTime, del)
		}
	}
	return b.String()
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
