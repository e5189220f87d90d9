//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/pkg/localenv"
	"github.com/caldera-sh/caldera/test/fedenv"
	"github.com/caldera-sh/caldera/test/poll"
)

// fedNamespace holds the federation's load, in the Karmada API server and,
// propagated, in the members.
const fedNamespace = "fed"

// fedQueues are the federation's queues (weights 2 and 1, no capability).
var fedQueues = map[string]int32{"fed-gold": 2, "fed-silver": 1}

// fedMembers are the member clusters, each of two kwok nodes of 8 CPUs.
var fedMembers = []string{"member-a", "member-b"}

// suspendGrace is how long a binding may stay suspended while its queue
// and a member have room: caldera-global's report grace and heartbeat
// (1 s each here), a restart's lease wait (its Lease lasts 15 s) and the
// stand-in's round, with margin.
const suspendGrace = 30 * time.Second

// fedFault is one kind of federation fault; like fault, it returns once
// what it broke has been set going again, with how long that took.
type fedFault struct {
	name   string
	inject func(ctx context.Context, f *fedEnv, rng *rand.Rand) (ready time.Duration, err error)
}

var fedFaults = []fedFault{
	{"kill -9 caldera-global", killGlobal(false)},
	{"kill -9 caldera-global and a member's caldera-controller-manager", killGlobal(true)},
	{"member API server paused (SIGSTOP 15 s)", pauseMember(15 * time.Second)},
	{"member lost with HyperJob children (failure policy RestartAll or Fail)", loseMember},
}

// memberLostAfter is caldera-global's --member-lost-after here.
const memberLostAfter = 5 * time.Second

// fedEnv is the federation under test: two members (scheduler and
// controller-manager each, as their service accounts), the Karmada API
// server with the stand-in playing Karmada's controllers, and
// caldera-global as a process, as the user caldera-global.
type fedEnv struct {
	dir     string
	karmada *fedenv.Karmada
	kc      client.Client
	members map[string]*fedenv.Member
	global  *controlplane.Component
	// globalMetrics is caldera-global's metrics address.
	globalMetrics string
	// tokens are bearer tokens the run made: no log may hold them.
	tokens []string
	// hyperJobs are the HyperJobs the run made, with the phase each must
	// end in.
	hyperJobs map[string]trainingv1alpha1.HyperJobPhase
	// firstPolicy picks the first HyperJob's failure policy.
	firstPolicy int
}

// TestFederationChaos injects the federation's faults (fedFaults) at
// random points under a steady load of Volcano Jobs submitted to the
// Karmada API server, and checks after each that caldera-global is back,
// work resumes, no Job runs in two members and no binding stays suspended
// while its queue and a member have room; at the end every Job completes.
func TestFederationChaos(t *testing.T) {
	s, rng, plan := faultPlan(t, fedFaults, func(f fedFault) string { return f.name }, 0xfed)

	ctx := t.Context()
	f := startFedEnv(t, ctx)
	obs := &fedObserver{f: f, suspendedWithRoom: map[string]time.Time{}, seenTwice: map[string]int{}}
	// Each member's kwok drops what a fault made fail; a resync per
	// member plays it again (resync_test.go).
	rsCtx, stopResync := context.WithCancel(ctx)
	var resyncers []*resyncer
	var rsWait sync.WaitGroup
	for _, name := range fedMembers {
		rs := newResyncer(f.members[name].Client)
		resyncers = append(resyncers, rs)
		rsWait.Go(func() {
			rs.run(rsCtx, fedNamespace, 5*time.Second, func(format string, args ...any) { t.Logf(name+": "+format, args...) })
		})
	}
	defer func() { stopResync(); rsWait.Wait() }()
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	l := &fedLoad{c: f.kc, rng: rand.New(rand.NewPCG(s, 0x10ad)), every: 800 * time.Millisecond, maxInFlight: 8}
	loadDone := make(chan struct{})
	go func() { defer close(loadDone); l.run(loadCtx) }()
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-loadCtx.Done():
				return
			case now := <-tick.C:
				obs.check(ctx, now)
			}
		}
	}()

	started := time.Now()
	got := map[string]*figures{}
	var probes []string
	for i, fault := range plan {
		time.Sleep(time.Duration(3000+rng.IntN(7000)) * time.Millisecond)
		fig := got[fault.name]
		if fig == nil {
			fig = &figures{}
			got[fault.name] = fig
		}
		fig.injected++
		at := time.Now()
		ready, err := fault.inject(ctx, f, rng)
		if err != nil {
			t.Fatalf("fault %d (%s): %v", i, fault.name, err)
		}
		name := fmt.Sprintf("fed-probe-%03d-1", i)
		probes = append(probes, name)
		resumed, member, err := f.probe(ctx, name, at)
		if err != nil {
			t.Fatalf("fault %d (%s): work did not resume: %v", i, fault.name, err)
		}
		fig.ready = append(fig.ready, ready)
		fig.resumed = append(fig.resumed, resumed)
		fig.recovered++
		t.Logf("fault %d/%d %s: ready in %s, a new job running in %s %s after the fault", i+1, len(plan), fault.name,
			ready.Round(time.Millisecond), member, resumed.Round(time.Millisecond))
		f.checkInvariants(t, ctx, obs, fault.name)
	}

	stopLoad()
	<-loadDone
	submitted, refused := l.snapshot()
	submitted = append(submitted, probes...)
	poll.Eventually(t, ctx, drainTimeout, "every submitted job Completed", func() (bool, string) {
		var jobs batchv1alpha1.JobList
		if err := f.kc.List(ctx, &jobs, client.InNamespace(fedNamespace)); err != nil {
			return false, err.Error()
		}
		phase := map[string]batchv1alpha1.JobPhase{}
		for _, j := range jobs.Items {
			phase[j.Name] = j.Status.State.Phase
		}
		var open []string
		for _, name := range submitted {
			p, ok := phase[name]
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
	poll.Eventually(t, ctx, drainTimeout, "every HyperJob finished as its failure policy says", func() (bool, string) {
		var open []string
		for name, want := range f.hyperJobs {
			var hj trainingv1alpha1.HyperJob
			if err := f.kc.Get(ctx, client.ObjectKey{Namespace: fedNamespace, Name: name}, &hj); err != nil {
				return false, err.Error()
			}
			if hj.Status.Phase != want {
				open = append(open, fmt.Sprintf("%s %s (want %s)", name, hj.Status.Phase, want))
			}
		}
		return len(open) == 0, strings.Join(open, ", ")
	})
	f.checkInvariants(t, ctx, obs, "the end")
	f.checkEachJobInOneMember(t, ctx, submitted)
	checkLogsHoldNoSecrets(t, f.dir, f.tokens...)
	elapsed := time.Since(started)

	var notes []string
	for i, rs := range resyncers {
		notes = append(notes, fedMembers[i]+": "+rs.summary())
	}
	md := renderFederation(got, obs.Violations(), len(submitted), refused, elapsed, s, *profile, notes...)
	t.Logf("figures:\n%s", md)
	if *report != "" {
		path := strings.TrimSuffix(*report, ".md") + "-federation.md"
		if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
			t.Error(err)
		}
	}
	for _, v := range obs.Violations() {
		t.Errorf("invariant broken: %s", v)
	}
}

// startFedEnv brings the federation up.
func startFedEnv(t *testing.T, ctx context.Context) *fedEnv {
	t.Helper()
	binDir, err := controlplane.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := *keepDir
	if dir == "" {
		dir = t.TempDir()
	} else {
		dir = filepath.Join(dir, "federation")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := &fedEnv{dir: dir, members: map[string]*fedenv.Member{}, hyperJobs: map[string]trainingv1alpha1.HyperJobPhase{}}
	clients := map[string]client.Client{}
	access := map[string]fedenv.MemberAccess{}
	for _, name := range fedMembers {
		var nodes []controlplane.NodeSpec
		for i := range 2 {
			nodes = append(nodes, controlplane.NodeSpec{Name: fmt.Sprintf("%s-%d", name, i), Labels: map[string]string{}, Capacity: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110"),
			}})
		}
		t.Logf("starting %s ...", name)
		m := fedenv.StartMember(t, ctx, localenv.Options{
			BinDir: binDir, Dir: filepath.Join(dir, name), Nodes: nodes, Verbosity: *verbosity,
			Components: []string{localenv.ComponentScheduler, localenv.ComponentControllerManager},
		}, slices.Sorted(maps.Keys(fedQueues)))
		f.members[name] = m
		clients[name] = m.Client
		access[name] = m.Access
		f.tokens = append(f.tokens, m.Access.Token)
	}
	t.Logf("starting the Karmada API server, the stand-in and caldera-global ...")
	f.karmada = fedenv.StartKarmada(t, ctx, binDir, dir)
	f.kc = f.karmada.Cluster.Client
	standIn, err := fedenv.NewStandIn(f.kc, clients, access, false)
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	go standIn.Run(sctx)
	for name, w := range fedQueues {
		q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1beta1.QueueSpec{Weight: w}}
		if err := f.kc.Create(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fedNamespace}}); err != nil {
		t.Fatal(err)
	}
	policy := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: fedNamespace, Name: "jobs"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: fedMembers},
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: "cluster", MaxGroups: 1, MinGroups: 1}},
			},
		},
	}
	if err := f.kc.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	f.global, f.globalMetrics = fedenv.StartGlobalProcess(t, ctx, fedenv.GlobalProcess{
		BinDir: binDir, Kubeconfig: f.karmada.GlobalKubeconfig, AdminKubeconfig: f.karmada.Cluster.APIServer.Kubeconfig,
		Dir: filepath.Join(dir, "global"), Verbosity: *verbosity,
		Change: func(o *options.Options) {
			// The stand-in refreshes member summaries every 200 ms.
			o.ReportGrace = time.Second
			o.Heartbeat = time.Second
			o.MemberLostAfter = memberLostAfter
		},
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("caldera-global log (tail):\n%s", controlplane.Tail(f.global.LogPath(), 40))
			for _, name := range fedMembers {
				for _, c := range f.members[name].Env.ComponentNames() {
					t.Logf("%s %s log (tail):\n%s", name, c, controlplane.Tail(filepath.Join(dir, name, c+".log"), 20))
				}
			}
		}
	})
	return f
}

// killGlobal kills caldera-global with SIGKILL (and, with member, the
// caldera-controller-manager of a member at random) and starts it again at
// once; it must win its Lease again, which the killed process did not give
// up.
func killGlobal(member bool) func(context.Context, *fedEnv, *rand.Rand) (time.Duration, error) {
	return func(ctx context.Context, f *fedEnv, rng *rand.Rand) (time.Duration, error) {
		start := time.Now()
		f.global.Kill()
		var other *controlplane.Component
		if member {
			other = f.members[fedMembers[rng.IntN(len(fedMembers))]].Env.Component(localenv.ComponentControllerManager)
			other.Kill()
		}
		if err := f.global.Restart(ctx); err != nil {
			return 0, err
		}
		if other != nil {
			if err := other.Restart(ctx); err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
}

// pauseMember stops a member's API server with SIGSTOP for hold, as a
// member cut off or stuck: its connections are accepted and never
// answered. It then resumes it and returns how long the member took to
// answer again.
func pauseMember(hold time.Duration) func(context.Context, *fedEnv, *rand.Rand) (time.Duration, error) {
	return func(ctx context.Context, f *fedEnv, rng *rand.Rand) (time.Duration, error) {
		m := f.members[fedMembers[rng.IntN(len(fedMembers))]]
		if err := m.Env.APIServer().Signal(syscall.SIGSTOP); err != nil {
			return 0, err
		}
		if err := holdFor(ctx, hold); err != nil {
			_ = m.Env.APIServer().Signal(syscall.SIGCONT)
			return 0, err
		}
		start := time.Now()
		if err := m.Env.APIServer().Signal(syscall.SIGCONT); err != nil {
			return 0, err
		}
		err := poll.Until(ctx, recoveryTimeout, "the member's API server answering", func() (bool, string) {
			var nodes corev1.NodeList
			err := m.Client.List(ctx, &nodes)
			return err == nil, fmt.Sprint(err)
		})
		return time.Since(start), err
	}
}

// hyperJobPrefix starts the names of the run's HyperJobs.
const hyperJobPrefix = "hj-"

// loseMember loses a member for good under a HyperJob with a child in
// each member: the member's API server is stopped (SIGSTOP) and left so
// until Karmada reports it NotReady (the stand-in, after
// fedenv.FailureThreshold) and caldera-global, memberLostAfter later,
// loses the child there; the HyperJob's failure policy (RestartAll or
// Fail, the first at random, then in turn) must then act: RestartAll deletes both children and
// counts a restart, Fail fails the HyperJob naming the lost member. A
// replacement then joins under the member's name (the API server resumed,
// its old copy of the child removed); ready is from then until Karmada
// reports it Ready. A RestartAll HyperJob must end Completed, a Fail one
// Failed.
func loseMember(ctx context.Context, f *fedEnv, rng *rand.Rand) (time.Duration, error) {
	lost := fedMembers[rng.IntN(len(fedMembers))]
	kept := fedMembers[0]
	if kept == lost {
		kept = fedMembers[1]
	}
	// The first policy at random, then the other, and so on: a run of
	// two or more tries both.
	if len(f.hyperJobs) == 0 {
		f.firstPolicy = rng.IntN(2)
	}
	action := []trainingv1alpha1.FailureAction{trainingv1alpha1.RestartAll, trainingv1alpha1.Fail}[(f.firstPolicy+len(f.hyperJobs))%2]
	name := fmt.Sprintf("%s%03d", hyperJobPrefix, len(f.hyperJobs))
	child := func(rj string, cluster string) trainingv1alpha1.ReplicatedJob {
		j := fedJob("template", "fed-gold", 2, 45*time.Second)
		return trainingv1alpha1.ReplicatedJob{Name: rj, Replicas: 1, ClusterNames: []string{cluster}, TemplateSpec: j.Spec}
	}
	hj := &trainingv1alpha1.HyperJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: fedNamespace, Name: name},
		Spec: trainingv1alpha1.HyperJobSpec{
			ReplicatedJobs: []trainingv1alpha1.ReplicatedJob{child("lost", lost), child("kept", kept)},
			FailurePolicy:  &trainingv1alpha1.FailurePolicy{Action: action},
		},
	}
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	if err := f.kc.Create(ctx, hj); err != nil {
		return 0, fmt.Errorf("creating HyperJob %s: %w", name, err)
	}
	want := trainingv1alpha1.HyperJobCompletedPhase
	if action == trainingv1alpha1.Fail {
		want = trainingv1alpha1.HyperJobFailedPhase
	}
	f.hyperJobs[name] = want
	get := func() (*trainingv1alpha1.HyperJob, error) {
		var got trainingv1alpha1.HyperJob
		err := f.kc.Get(ctx, client.ObjectKeyFromObject(hj), &got)
		return &got, err
	}
	if err := poll.Until(ctx, 3*time.Minute, "HyperJob "+name+" running", func() (bool, string) {
		got, err := get()
		if err != nil {
			return false, err.Error()
		}
		return got.Status.Phase == trainingv1alpha1.HyperJobRunning, string(got.Status.Phase)
	}); err != nil {
		return 0, err
	}

	m := f.members[lost]
	if err := m.Env.APIServer().Signal(syscall.SIGSTOP); err != nil {
		return 0, err
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = m.Env.APIServer().Signal(syscall.SIGCONT)
		}
	}()
	err := poll.Until(ctx, fedenv.FailureThreshold+memberLostAfter+time.Minute, "HyperJob "+name+"'s failure policy ("+string(action)+") acting on the child lost with "+lost, func() (bool, string) {
		got, err := get()
		if err != nil {
			return false, err.Error()
		}
		failed := meta.FindStatusCondition(got.Status.Conditions, trainingv1alpha1.HyperJobFailed)
		if action == trainingv1alpha1.Fail {
			return got.Status.Phase == trainingv1alpha1.HyperJobFailedPhase && failed != nil && strings.Contains(failed.Message, "lost with its member (member "+lost+" NotReady"),
				fmt.Sprintf("phase %s, Failed %+v", got.Status.Phase, failed)
		}
		return got.Status.RetryCount == 1, fmt.Sprintf("phase %s, %d restarts", got.Status.Phase, got.Status.RetryCount)
	})
	if err != nil {
		return 0, err
	}

	start := time.Now()
	resumed = true
	if err := m.Env.APIServer().Signal(syscall.SIGCONT); err != nil {
		return 0, err
	}
	err = poll.Until(ctx, recoveryTimeout, "Karmada reporting "+lost+" Ready", func() (bool, string) {
		var cl clusterv1alpha1.Cluster
		if err := f.kc.Get(ctx, client.ObjectKey{Name: lost}, &cl); err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady), "not Ready"
	})
	return time.Since(start), err
}

// probe submits a one-pod Job to the Karmada API server and returns how
// long after since its pod was seen bound in a member, and which.
func (f *fedEnv) probe(ctx context.Context, name string, since time.Time) (time.Duration, string, error) {
	j := fedJob(name, "fed-gold", 1, time.Second)
	prefix := strings.TrimSuffix(name, "-1") + "-1-"
	if err := poll.Until(ctx, recoveryTimeout, "the probe "+name+" created", func() (bool, string) {
		err := f.kc.Create(ctx, j.DeepCopy())
		return err == nil || strings.Contains(err.Error(), "already exists"), fmt.Sprint(err)
	}); err != nil {
		return 0, "", err
	}
	var bound time.Time
	var where string
	err := poll.Until(ctx, recoveryTimeout, "the probe "+name+" running in a member", func() (bool, string) {
		for _, m := range fedMembers {
			var pods corev1.PodList
			lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := f.members[m].Client.List(lctx, &pods, client.InNamespace(fedNamespace))
			cancel()
			if err != nil {
				continue
			}
			for _, p := range pods.Items {
				if strings.HasPrefix(p.Name, prefix) && p.Spec.NodeName != "" {
					bound, where = time.Now(), m
					return true, ""
				}
			}
		}
		return false, "no pod bound"
	})
	if err != nil {
		return 0, "", err
	}
	return max(bound.Sub(since), 0), where, nil
}

// checkInvariants fails the test on a broken invariant after a fault:
// caldera-global ready and serving its metrics to the reader, and nothing
// the observer saw.
func (f *fedEnv) checkInvariants(t *testing.T, ctx context.Context, obs *fedObserver, after string) {
	t.Helper()
	hc := &http.Client{Timeout: 2 * time.Second}
	resp, err := hc.Get(f.global.ReadyURL())
	if err != nil {
		t.Errorf("after %s: caldera-global not ready: %v", after, err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("after %s: caldera-global not ready: %s", after, resp.Status)
		}
	}
	token := fedenv.MetricsReaderToken(t, ctx, f.kc)
	f.tokens = append(f.tokens, token)
	poll.Eventually(t, ctx, 30*time.Second, "after "+after+": caldera-global serving its metrics to the reader", func() (bool, string) {
		resp, err := readerGet(ctx, f.globalMetrics, token)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	for _, v := range obs.Violations() {
		t.Errorf("after %s: invariant broken: %s", after, v)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// checkEachJobInOneMember: every job submitted is in exactly one member,
// with no more pods than its replicas.
func (f *fedEnv) checkEachJobInOneMember(t *testing.T, ctx context.Context, submitted []string) {
	t.Helper()
	in := map[string][]string{}
	pods := map[string]int{}
	for _, m := range fedMembers {
		var jobs batchv1alpha1.JobList
		if err := f.members[m].Client.List(ctx, &jobs, client.InNamespace(fedNamespace)); err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs.Items {
			in[j.Name] = append(in[j.Name], m)
		}
		var pl corev1.PodList
		if err := f.members[m].Client.List(ctx, &pl, client.InNamespace(fedNamespace)); err != nil {
			t.Fatal(err)
		}
		for _, p := range pl.Items {
			for _, o := range p.OwnerReferences {
				if o.Kind == "Job" {
					pods[m+"/"+o.Name]++
				}
			}
		}
	}
	for _, name := range submitted {
		if len(in[name]) != 1 {
			t.Errorf("job %s is in members %v, want exactly one", name, in[name])
			continue
		}
		if n, want := pods[in[name][0]+"/"+name], int(replicasOf(name)); n > want {
			t.Errorf("job %s has %d pods in %s, more than its %d replicas", name, n, in[name][0], want)
		}
	}
}

// fedObserver checks, every second, what must hold at all times: no Job
// in two members, and no binding suspended while its queue (unlimited
// here) and a member have room for longer than suspendGrace.
type fedObserver struct {
	f *fedEnv

	mu sync.Mutex
	// suspendedWithRoom is since when each binding has been seen held
	// (suspended, placed nowhere) while a member had room for it.
	suspendedWithRoom map[string]time.Time
	// seenTwice counts consecutive checks that saw a Job in two members
	// (the stand-in takes a Job off a member it no longer places it in
	// within a round).
	seenTwice  map[string]int
	violations []string
}

func (o *fedObserver) violate(what string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !slices.Contains(o.violations, what) {
		o.violations = append(o.violations, what)
	}
}

// Violations returns the invariants broken so far.
func (o *fedObserver) Violations() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.violations)
}

func (o *fedObserver) check(ctx context.Context, now time.Time) {
	// Each member's free CPU, and where each Job is; a member that does
	// not answer (paused) has no room known.
	free := map[string]int64{}
	in := map[string][]string{}
	for _, m := range fedMembers {
		c := o.f.members[m].Client
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var nodes corev1.NodeList
		var pods corev1.PodList
		var jobs batchv1alpha1.JobList
		err := c.List(lctx, &nodes)
		if err == nil {
			err = c.List(lctx, &pods)
		}
		if err == nil {
			err = c.List(lctx, &jobs, client.InNamespace(fedNamespace))
		}
		cancel()
		if err != nil {
			continue
		}
		var milli int64
		for _, n := range nodes.Items {
			milli += n.Status.Allocatable.Cpu().MilliValue()
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			for _, ctr := range p.Spec.Containers {
				milli -= ctr.Resources.Requests.Cpu().MilliValue()
			}
		}
		free[m] = milli
		for _, j := range jobs.Items {
			// A Job whose pods the member has not made yet still counts
			// against its room.
			if j.Status.State.Phase == "" || j.Status.State.Phase == batchv1alpha1.JobPending {
				free[m] -= int64(replicasOf(j.Name)) * 1000
			}
			in[j.Name] = append(in[j.Name], m)
		}
	}
	o.mu.Lock()
	for name, ms := range in {
		if len(ms) > 1 {
			o.seenTwice[name]++
			if o.seenTwice[name] >= 3 {
				o.mu.Unlock()
				o.violate(fmt.Sprintf("job %s in members %v for 3 s", name, ms))
				o.mu.Lock()
			}
		} else {
			delete(o.seenTwice, name)
		}
	}
	o.mu.Unlock()

	var rbs workv1alpha2.ResourceBindingList
	if err := o.f.kc.List(ctx, &rbs, client.InNamespace(fedNamespace)); err != nil {
		return
	}
	roomiest := int64(0)
	for _, m := range free {
		roomiest = max(roomiest, m)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	held := map[string]bool{}
	for _, rb := range rbs.Items {
		// Held: suspended and placed nowhere. (The dispatcher releases a
		// binding by placing it; its suspension stays.)
		if !rb.Spec.SchedulingSuspended() || len(rb.Spec.Clusters) > 0 || !rb.DeletionTimestamp.IsZero() {
			continue
		}
		// A HyperJob's children are released together, when all fit.
		if strings.HasPrefix(rb.Name, hyperJobPrefix) {
			continue
		}
		need := int64(replicasOf(rb.Spec.Resource.Name)) * 1000
		if need > roomiest {
			continue
		}
		held[rb.Name] = true
		since, ok := o.suspendedWithRoom[rb.Name]
		if !ok {
			o.suspendedWithRoom[rb.Name] = now
			continue
		}
		if now.Sub(since) > suspendGrace {
			what := fmt.Sprintf("binding %s held for %s while a member had %dm CPU free for its %dm", rb.Name, now.Sub(since).Round(time.Second), roomiest, need)
			if !slices.ContainsFunc(o.violations, func(v string) bool { return strings.HasPrefix(v, "binding "+rb.Name+" ") }) {
				o.violations = append(o.violations, what)
			}
		}
	}
	for name := range o.suspendedWithRoom {
		if !held[name] {
			delete(o.suspendedWithRoom, name)
		}
	}
}

// fedLoad submits a steady mix of Jobs to the Karmada API server: gangs of
// 1, 2 and 4 one-CPU pods running 3 to 8 s, in both queues, at most
// maxInFlight unfinished at a time (their 1 to 32 CPUs within the
// federation's 32, so that a member always has room for the probe soon).
type fedLoad struct {
	c           client.Client
	rng         *rand.Rand
	every       time.Duration
	maxInFlight int

	mu        sync.Mutex
	submitted []string
	refused   int
}

func (l *fedLoad) run(ctx context.Context) {
	tick := time.NewTicker(l.every)
	defer tick.Stop()
	queues := slices.Sorted(maps.Keys(fedQueues))
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if l.inFlight(ctx) >= l.maxInFlight {
			continue
		}
		pods := []int32{1, 2, 4}[l.rng.IntN(3)]
		j := fedJob(fmt.Sprintf("fed-%04d-%d", i, pods), queues[l.rng.IntN(len(queues))], pods, time.Duration(3+l.rng.IntN(6))*time.Second)
		for ctx.Err() == nil {
			if err := l.c.Create(ctx, j.DeepCopy()); err == nil || strings.Contains(err.Error(), "already exists") {
				break
			}
			l.mu.Lock()
			l.refused++
			l.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
		if ctx.Err() == nil {
			l.mu.Lock()
			l.submitted = append(l.submitted, j.Name)
			l.mu.Unlock()
		}
	}
}

// inFlight counts the load's Jobs the Karmada API server does not show
// Completed.
func (l *fedLoad) inFlight(ctx context.Context) int {
	var jobs batchv1alpha1.JobList
	if err := l.c.List(ctx, &jobs, client.InNamespace(fedNamespace), client.HasLabels{loadLabel}); err != nil {
		return l.maxInFlight
	}
	n := 0
	for _, j := range jobs.Items {
		if j.Status.State.Phase != batchv1alpha1.JobCompleted {
			n++
		}
	}
	return n
}

func (l *fedLoad) snapshot() ([]string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.submitted), l.refused
}

// fedJob is a gang of pods one-CPU pods in the queue, each running for
// run. Its name ends in -<pods> (replicasOf reads it back).
func fedJob(name, queue string, pods int32, run time.Duration) *batchv1alpha1.Job {
	if !strings.HasSuffix(name, fmt.Sprintf("-%d", pods)) {
		name = fmt.Sprintf("%s-%d", name, pods)
	}
	return &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: fedNamespace, Name: name, Labels: map[string]string{loadLabel: "true"}},
		Spec: batchv1alpha1.JobSpec{
			SchedulerName: "volcano", Queue: queue, MinAvailable: pods,
			Tasks: []batchv1alpha1.TaskSpec{{
				Name: "worker", Replicas: pods,
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{RunDurationAnnotation: run.String()}},
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("64Mi")},
						}}},
					},
				},
			}},
		},
	}
}

// replicasOf reads a load Job's pod count from its name (fedJob).
func replicasOf(name string) int32 {
	name = strings.TrimSuffix(name, "-job")
	var n int32
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		fmt.Sscan(name[i+1:], &n)
	}
	return max(n, 1)
}

// renderFederation writes the federation's figures as docs/reliability.md's
// table.
func renderFederation(got map[string]*figures, violations []string, submitted, refused int, elapsed time.Duration, seed uint64, profile string, notes ...string) string {
	md := render(got, violations, submitted, refused, 0, elapsed, seed, profile, notes...)
	// The member suite's first line counts pods bound; here Jobs matter.
	if i := strings.IndexByte(md, '\n'); i >= 0 {
		md = fmt.Sprintf("Federation, profile %s, seed %d, %s: %d jobs submitted to the Karmada API server (%d creates refused and retried), all Completed in exactly one member.",
			profile, seed, elapsed.Round(time.Second), submitted, refused) + md[i:]
	}
	return md
}
