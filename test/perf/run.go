package perf

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	shardv1alpha1 "github.com/caldera-sh/caldera/apis/shard/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

const (
	// settle is how long binding must have stopped before a saturating
	// workload counts as placed as far as it can be.
	settle = 5 * time.Second
	// stallTimeout ends a run in which nothing was bound for this long while
	// pods were still pending.
	stallTimeout = 2 * time.Minute
	// probeTimeout bounds the wait for one probe pod's bind.
	probeTimeout = 2 * time.Minute
	// profileChunk is the length of one CPU profile request.
	profileChunk = 10 * time.Second
)

// RunOptions configure a benchmark run.
type RunOptions struct {
	// BinDir holds the control-plane binaries and caldera-scheduler.
	BinDir string
	// WorkDir is where each environment's directory (logs, audit log, etcd
	// data) is made. It is removed after a run without problems.
	WorkDir string
	// Limits are every scheduler's client QPS and burst.
	Limits ClientLimits
	// Keep keeps WorkDir's environment directories also after clean runs.
	Keep bool
	// ProfileDir, when set, receives caldera-scheduler's CPU profile.
	ProfileDir string
	// APIServerProfileDir, when set, receives the API server's CPU profile
	// over each scheduler's run.
	APIServerProfileDir string
	// Logf reports progress.
	Logf func(format string, args ...any)
}

// RunWorkload starts an environment with the workload's nodes at one size
// and runs the schedulers on it, one after the other, each on a fresh
// namespace with every pod of the previous one deleted.
func RunWorkload(ctx context.Context, w *Workload, size string, schedulers []string, o RunOptions) (_ []Result, err error) {
	if _, ok := w.Sizes[size]; !ok {
		return nil, fmt.Errorf("workload %s has no size %q (sizes: %v)", w.Name, size, slices.Sorted(maps.Keys(w.Sizes)))
	}
	specs := Schedulers()
	for _, s := range schedulers {
		if _, ok := specs[s]; !ok {
			return nil, fmt.Errorf("unknown scheduler %q", s)
		}
	}
	dir, err := os.MkdirTemp(o.WorkDir, fmt.Sprintf("caldera-perf-%s-%s-", w.Name, size))
	if err != nil {
		return nil, err
	}
	var results []Result
	defer func() {
		clean := err == nil && !o.Keep
		for _, r := range results {
			clean = clean && len(r.Problems) == 0
		}
		if clean {
			_ = os.RemoveAll(dir)
		} else {
			o.Logf("logs and audit log kept in %s", dir)
		}
	}()
	start := time.Now()
	o.Logf("%s/%s: starting the control plane and %d nodes", w.Name, size, w.Sizes[size].Nodes)
	env, err := StartEnvironment(ctx, o.BinDir, dir, w, size)
	if err != nil {
		return nil, err
	}
	defer func() {
		// A control plane slow to stop on a busy machine is no reason to
		// discard the results.
		if stopErr := env.Stop(); stopErr != nil {
			o.Logf("stopping the control plane: %v", stopErr)
		}
	}()
	o.Logf("%s/%s: control plane up in %s", w.Name, size, time.Since(start).Round(time.Second))
	for _, s := range schedulers {
		r, err := runScheduler(ctx, env, w, size, specs[s], o)
		if err != nil {
			return results, fmt.Errorf("%s/%s with %s: %w", w.Name, size, s, err)
		}
		results = append(results, r)
	}
	return results, nil
}

// runScheduler runs one scheduler on the workload in namespace perf-<name>.
func runScheduler(ctx context.Context, env *Environment, w *Workload, size string, spec schedulerSpec, o RunOptions) (Result, error) {
	ns := "perf-" + spec.Name
	res := Result{
		Workload: w.Name, Size: size, Mode: w.Mode, Scheduler: spec.Name,
		Nodes: w.Sizes[size].Nodes, Pods: w.Pods(size), ClientLimits: o.Limits,
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return res, err
	}
	recCtx, stopRecorder := context.WithCancel(ctx)
	defer stopRecorder()
	rec, err := startBindRecorder(recCtx, env.Clientset, ns)
	if err != nil {
		return res, err
	}
	jobs := expandJobs(w, size)
	res.Jobs = len(jobs)
	backlog, stream := splitArrivals(w, jobs)
	if len(backlog) > 0 {
		pods := 0
		for _, j := range backlog {
			pods += len(j.pods)
		}
		o.Logf("%s/%s/%s: creating %d jobs, %d pods", w.Name, size, spec.Name, len(backlog), pods)
		if err := createBacklog(ctx, env, ns, spec.schedulerNameOf, w.Devices, backlog); err != nil {
			return res, err
		}
		if err := poll.Until(ctx, 2*time.Minute, "the watch seeing every pod", func() (bool, string) {
			n := rec.seenCount()
			return n == pods, fmt.Sprintf("%d of %d pods seen", n, pods)
		}); err != nil {
			return res, err
		}
	}

	runDir := filepath.Join(env.Dir, spec.Name)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return res, err
	}
	offset, err := auditOffset(env.AuditLog)
	if err != nil {
		return res, err
	}
	apiBefore, err := readProcessUsage(env.apiServerPID())
	if err != nil {
		return res, err
	}
	startOpts := startOptions{Limits: o.Limits, FastLane: w.FastLane()}
	if w.Devices != nil {
		startOpts.Tiers = calderaDeviceTiers()
	}
	if o.ProfileDir != "" && spec.Name == Caldera {
		port, err := controlplane.FreePort()
		if err != nil {
			return res, err
		}
		startOpts.ProfileAddr = fmt.Sprintf("127.0.0.1:%d", port)
	}
	o.Logf("%s/%s/%s: starting the scheduler", w.Name, size, spec.Name)
	t0 := time.Now()
	proc, err := spec.start(ctx, env, runDir, startOpts)
	if err != nil {
		return res, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = proc.Stop()
		}
	}()
	var profiler, apiProfiler *cpuProfiler
	if startOpts.ProfileAddr != "" {
		profiler = startCPUProfiler(ctx, plainPprof(startOpts.ProfileAddr), filepath.Join(o.ProfileDir, fmt.Sprintf("%s-%s-%s-cpu", w.Name, size, spec.Name)))
	}
	if o.APIServerProfileDir != "" {
		src, err := env.apiServerPprof()
		if err != nil {
			return res, err
		}
		apiProfiler = startCPUProfiler(ctx, src, filepath.Join(o.APIServerProfileDir, fmt.Sprintf("%s-%s-%s-apiserver", w.Name, size, spec.Name)))
	}

	if len(stream) > 0 && len(backlog) > 0 {
		// The stream arrives while the scheduler works through the
		// backlog: from its first bind, not while it starts.
		if err := poll.Until(ctx, stallTimeout, "the first bind of the backlog", func() (bool, string) {
			bound, _ := rec.progress()
			return bound > 0, "nothing bound"
		}); err != nil {
			return res, err
		}
	}
	if len(stream) > 0 {
		rate := w.Sizes[size].JobsPerSecond
		o.Logf("%s/%s/%s: creating %d jobs at %g per second", w.Name, size, spec.Name, len(stream), rate)
		if err := createStream(ctx, env, ns, spec.schedulerNameOf, w.Devices, stream, rate); err != nil {
			return res, err
		}
	}
	o.Logf("%s/%s/%s: waiting for binds", w.Name, size, spec.Name)
	if err := waitPlaced(ctx, rec, res.Pods, w.Saturating); err != nil {
		bound, _ := rec.progress()
		res.Problems = append(res.Problems, fmt.Sprintf("%v (%d of %d pods bound)", err, bound, res.Pods))
	}
	var probes []string
	if w.Probe != nil && len(res.Problems) == 0 {
		o.Logf("%s/%s/%s: probing with %d single pods", w.Name, size, spec.Name, w.Probe.Count)
		var err error
		probes, res.ProbeLatencies, err = runProbes(ctx, env, rec, ns, spec.podSchedulerName, w.Probe)
		if err != nil {
			res.Problems = append(res.Problems, err.Error())
		}
		p := percentiles(res.ProbeLatencies)
		res.ProbeLatency = &p
	}

	// CPU up to the end of the binds, as for a scheduler stopped there.
	usage, err := schedulerUsage(proc)
	if err != nil {
		return res, fmt.Errorf("reading the scheduler's usage: %w", err)
	}
	apiAfter, err := readProcessUsage(env.apiServerPID())
	if err != nil {
		return res, err
	}
	res.SchedulerCPUSeconds, res.SchedulerPeakRSSBytes = usage.CPUSeconds, usage.PeakRSSBytes
	res.APIServerCPUSeconds = apiAfter.CPUSeconds - apiBefore.CPUSeconds
	if spec.Name != Kube && !spec.Ceiling && len(res.Problems) == 0 {
		if err := waitStatusSettled(ctx, env, ns, jobs, rec); err != nil {
			res.Problems = append(res.Problems, err.Error())
		}
		res.StatusSettledSeconds = time.Since(t0).Seconds()
		if lags := rec.startLags(); len(lags) > 0 {
			p := percentiles(lags)
			res.PodStartLag = &p
		}
		// The peak over the whole run, settling included.
		if usage, err = schedulerUsage(proc); err != nil {
			return res, fmt.Errorf("reading the scheduler's usage: %w", err)
		}
		res.SchedulerPeakRSSBytes = usage.PeakRSSBytes
	}
	if profiler != nil {
		res.CPUProfiles, err = profiler.stop()
		if err != nil {
			o.Logf("%s/%s/%s: CPU profile: %v", w.Name, size, spec.Name, err)
		}
	}
	if apiProfiler != nil {
		res.APIServerProfiles, err = apiProfiler.stop()
		if err != nil {
			o.Logf("%s/%s/%s: the API server's CPU profile: %v", w.Name, size, spec.Name, err)
		}
	}
	stopped = true
	if err := proc.Stop(); err != nil {
		return res, err
	}
	if res.Writes, err = countWrites(env.AuditLog, offset, spec.UserAgent); err != nil {
		return res, err
	}

	measure(&res, jobs, rec, res.Writes.boundAt, ns, t0)
	res.Problems = append(res.Problems, check(w, jobs, probes, rec, res.Writes, ns, spec.Name != Kube && !spec.Ceiling, !spec.Ceiling)...)
	if len(spec.PodSchedulerNames) > 0 {
		res.Problems = append(res.Problems, checkShards(ctx, env, jobs, rec, spec)...)
	}
	if w.Devices != nil {
		res.Problems = append(res.Problems, checkDevices(ctx, env, w, ns, jobs, rec)...)
	}
	if bound := res.PodsBound + len(res.ProbeLatencies); bound > 0 {
		res.WritesPerPod = float64(res.Writes.Total) / float64(bound)
	}

	o.Logf("%s/%s/%s: %d of %d pods bound, %.0f pods/s; deleting them", w.Name, size, spec.Name, res.PodsBound, res.Pods, res.PodsPerSecond)
	stopRecorder()
	return res, deleteAll(ctx, env, ns, jobs, probes)
}

// statusSettleTimeout bounds the wait for PodGroup status after the last
// bind: the scheduler holds a placed gang's Running for its pods to start,
// and kwok starts pods at its own pace.
const statusSettleTimeout = 2 * time.Minute

// waitStatusSettled waits until the PodGroup of every gang whose pods are
// all bound shows Running, or Completed, with as many pods running (or
// succeeded) as it has.
func waitStatusSettled(ctx context.Context, env *Environment, ns string, jobs []*job, rec *bindRecorder) error {
	want := map[string]int32{}
	for _, j := range jobs {
		if j.group.Kind != JobKindGang {
			continue
		}
		bound := true
		for _, p := range j.pods {
			if _, ok := rec.boundTime(p); !ok {
				bound = false
				break
			}
		}
		if bound {
			want[j.name] = int32(len(j.pods))
		}
	}
	if len(want) == 0 {
		return nil
	}
	return poll.Until(ctx, statusSettleTimeout, "the PodGroups of the bound gangs Running with their pods", func() (bool, string) {
		var l schedulingv1beta1.PodGroupList
		if err := env.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		waiting, example := 0, ""
		for _, pg := range l.Items {
			n, ok := want[pg.Name]
			if !ok {
				continue
			}
			st := pg.Status
			done := (st.Phase == schedulingv1beta1.PodGroupRunning || st.Phase == schedulingv1beta1.PodGroupCompleted) && st.Running+st.Succeeded >= n
			if !done {
				waiting++
				example = fmt.Sprintf("%s: phase %q, %d running", pg.Name, st.Phase, st.Running)
			}
		}
		return waiting == 0, fmt.Sprintf("%d PodGroups waiting, e.g. %s", waiting, example)
	})
}

// waitPlaced waits until every pod is bound or, for a saturating workload,
// until binding has stopped for settle.
func waitPlaced(ctx context.Context, rec *bindRecorder, pods int, saturating bool) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	for {
		bound, last := rec.progress()
		if bound == pods {
			return nil
		}
		// Binding has stopped only once it stopped after the wait began
		// (a stream workload's last job was created).
		since := latest(start, last)
		if saturating && bound > 0 && time.Since(since) >= settle {
			return nil
		}
		if time.Since(since) >= stallTimeout {
			return fmt.Errorf("nothing bound for %s", stallTimeout)
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-tick.C:
		}
	}
}

// runProbes creates the probe pods one at a time, each after the previous
// one is bound and the interval has passed, and returns their latencies.
func runProbes(ctx context.Context, env *Environment, rec *bindRecorder, ns string, schedulerName func(int) string, p *Probe) ([]string, []float64, error) {
	var names []string
	var latencies []float64
	for i := range p.Count {
		name := fmt.Sprintf("probe-%03d", i)
		names = append(names, name)
		pod := benchPod(ns, name, schedulerName(i), name, p.Requests).Obj()
		created := time.Now()
		if _, err := env.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return names, latencies, fmt.Errorf("creating probe %s: %w", name, err)
		}
		var bound time.Time
		if err := poll.Until(ctx, probeTimeout, "probe "+name+" bound", func() (bool, string) {
			t, ok := rec.boundTime(name)
			bound = t
			return ok, "not bound"
		}); err != nil {
			return names, latencies, err
		}
		latencies = append(latencies, bound.Sub(created).Seconds())
		select {
		case <-ctx.Done():
			return names, latencies, context.Cause(ctx)
		case <-time.After(p.Interval.Duration):
		}
	}
	return names, latencies, nil
}

// measure fills in the throughput and latency figures from the watch's bind
// times, and the API server's bind rate from the audit log's.
func measure(res *Result, jobs []*job, rec *bindRecorder, serverBoundAt map[string]time.Time, ns string, t0 time.Time) {
	var first, last, serverFirst, serverLast time.Time
	serverBound := 0
	var latencies []float64
	type groupSpan struct {
		first, last time.Time
		latencies   []float64
		res         *GroupResult
	}
	var groups []*groupSpan
	byGroup := map[string]*groupSpan{}
	for _, j := range jobs {
		if byGroup[j.group.Name] == nil {
			g := &groupSpan{res: &GroupResult{Name: j.group.Name}}
			byGroup[j.group.Name] = g
			groups = append(groups, g)
		}
	}
	for _, j := range jobs {
		g := byGroup[j.group.Name]
		var jobLast time.Time
		all := true
		for _, p := range j.pods {
			if t, ok := serverBoundAt[ns+"/"+p]; ok {
				serverBound++
				serverFirst, serverLast = earliest(serverFirst, t), latest(serverLast, t)
			}
			t, ok := rec.boundTime(p)
			if !ok {
				all = false
				continue
			}
			res.PodsBound++
			g.res.PodsBound++
			first, last, jobLast = earliest(first, t), latest(last, t), latest(jobLast, t)
			g.first, g.last = earliest(g.first, t), latest(g.last, t)
		}
		if !all {
			continue
		}
		res.JobsBound++
		from := j.created
		if from.Before(t0) {
			from = t0
		}
		latencies = append(latencies, jobLast.Sub(from).Seconds())
		g.latencies = append(g.latencies, jobLast.Sub(from).Seconds())
	}
	res.JobLatency = percentiles(latencies)
	if len(groups) > 1 {
		for _, g := range groups {
			g.res.JobLatency = percentiles(g.latencies)
			if span := g.last.Sub(g.first).Seconds(); g.res.PodsBound > 1 && span > 0 {
				g.res.PodsPerSecond = float64(g.res.PodsBound-1) / span
			}
			res.Groups = append(res.Groups, *g.res)
		}
	}
	if span := serverLast.Sub(serverFirst).Seconds(); serverBound > 1 && span > 0 {
		res.ServerPodsPerSecond = float64(serverBound-1) / span
	}
	if res.PodsBound == 0 {
		return
	}
	res.FirstBindSeconds = first.Sub(t0).Seconds()
	res.LastBindSeconds = last.Sub(t0).Seconds()
	if span := last.Sub(first).Seconds(); res.PodsBound > 1 && span > 0 {
		res.PodsPerSecond = float64(res.PodsBound-1) / span
	}
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// check returns the run's correctness problems: pods left pending when the
// workload fits, pods not bound exactly once, nodes over capacity (with
// capacity; the no-op binder does not look) and, for a scheduler that
// honours PodGroups, gangs bound in part.
func check(w *Workload, jobs []*job, probes []string, rec *bindRecorder, writes WriteCounts, ns string, gangs, capacity bool) []string {
	var problems []string
	var pending []string
	requested := map[string]corev1.ResourceList{}
	podsOn := map[string]int64{}
	add := func(pod string, req corev1.ResourceList) {
		node := rec.nodeOf(pod)
		if node == "" {
			return
		}
		podsOn[node]++
		if requested[node] == nil {
			requested[node] = corev1.ResourceList{}
		}
		for name, q := range req {
			sum := requested[node][name]
			sum.Add(q)
			requested[node][name] = sum
		}
	}
	boundOnce := func(pod string) {
		_, bound := rec.boundTime(pod)
		n := writes.bindings[ns+"/"+pod]
		switch {
		case bound && n != 1:
			problems = append(problems, fmt.Sprintf("pod %s bound, with %d successful bindings by the scheduler", pod, n))
		case !bound && n != 0:
			problems = append(problems, fmt.Sprintf("pod %s not seen bound, with %d successful bindings", pod, n))
		}
	}
	for _, j := range jobs {
		bound := 0
		for _, p := range j.pods {
			if _, ok := rec.boundTime(p); ok {
				bound++
			} else {
				pending = append(pending, p)
			}
			add(p, j.group.Requests)
			boundOnce(p)
		}
		if gangs && j.group.Kind == JobKindGang && bound != 0 && bound != len(j.pods) {
			problems = append(problems, fmt.Sprintf("gang %s has %d of its %d pods bound", j.name, bound, len(j.pods)))
		}
	}
	for _, p := range probes {
		add(p, w.Probe.Requests)
		boundOnce(p)
	}
	if len(pending) > 0 && !w.Saturating {
		problems = append(problems, fmt.Sprintf("%d pods left pending (first: %s)", len(pending), pending[0]))
	}
	if n := rec.rebinds(); n > 0 {
		problems = append(problems, fmt.Sprintf("%d pods changed node after being bound", n))
	}
	if !capacity {
		return problems
	}
	allocatable := corev1.ResourceList{corev1.ResourceCPU: w.Nodes.CPU, corev1.ResourceMemory: w.Nodes.Memory}
	for _, node := range slices.Sorted(maps.Keys(podsOn)) {
		if podsOn[node] > int64(w.Nodes.Pods) {
			problems = append(problems, fmt.Sprintf("node %s holds %d pods, capacity %d", node, podsOn[node], w.Nodes.Pods))
		}
		for name, c := range allocatable {
			if q := requested[node][name]; q.Cmp(c) > 0 {
				problems = append(problems, fmt.Sprintf("node %s: %s requested %s, allocatable %s", node, name, q.String(), c.String()))
			}
		}
	}
	return problems
}

// deleteAll deletes the run's pods, creationWorkers at a time and with no
// grace period (kwok's pods have nothing to stop), and its PodGroups the
// same way, and waits until no pod is left so that the next scheduler finds
// the nodes empty. One delete-collection request of 10,000 pods (or
// PodGroups) outlasts the API server's request timeout on a small machine. The namespace itself stays:
// without kube-controller-manager nothing would empty it.
func deleteAll(ctx context.Context, env *Environment, ns string, jobs []*job, probes []string) error {
	pods := env.Clientset.CoreV1().Pods(ns)
	names := slices.Clone(probes)
	for _, j := range jobs {
		names = append(names, j.pods...)
	}
	err := forEach(ctx, names, creationWorkers, func(ctx context.Context, name string) error {
		err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting pod %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var groups []string
	for _, j := range jobs {
		if j.group.Kind == JobKindGang {
			groups = append(groups, j.name)
		}
	}
	err = forEach(ctx, groups, creationWorkers, func(ctx context.Context, name string) error {
		pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := env.Client.Delete(ctx, pg); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting PodGroup %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := deleteClaims(ctx, env, ns); err != nil {
		return err
	}
	return poll.Until(ctx, 5*time.Minute, "the pods of "+ns+" deleted", func() (bool, string) {
		l, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, err.Error()
		}
		return len(l.Items) == 0, "pods remain"
	})
}

// checkShards returns the pods a sharded scheduler bound outside its
// instance's NodeShard.
func checkShards(ctx context.Context, env *Environment, jobs []*job, rec *bindRecorder, spec schedulerSpec) []string {
	var shards shardv1alpha1.NodeShardList
	if err := env.Client.List(ctx, &shards); err != nil {
		return []string{fmt.Sprintf("listing NodeShards: %v", err)}
	}
	shardOf := map[string]string{}
	for _, s := range shards.Items {
		for _, n := range s.Spec.NodesDesired {
			shardOf[n] = s.Name
		}
	}
	var problems []string
	outside := 0
	for _, j := range jobs {
		want := spec.schedulerNameOf(j)
		for _, p := range j.pods {
			if node := rec.nodeOf(p); node != "" && shardOf[node] != want {
				if outside == 0 {
					problems = append(problems, fmt.Sprintf("pod %s of instance %s bound to %s, in shard %q", p, want, node, shardOf[node]))
				}
				outside++
			}
		}
	}
	if outside > 1 {
		problems = append(problems, fmt.Sprintf("%d pods bound outside their instance's shard", outside))
	}
	return problems
}
