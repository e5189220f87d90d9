package perf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
)

// ControllerOptions are the Job controller benchmark's settings.
type ControllerOptions struct {
	BinDir string
	// Nodes is the number of simulated nodes (32 cores each).
	Nodes int
	// Jobs Volcano Jobs of PodsPerJob pods (one task, minAvailable all of
	// them, 1 core each) are created at once.
	Jobs, PodsPerJob int
	Limits           ClientLimits
	// WorkDir holds the control plane's files; empty means a temporary
	// directory.
	WorkDir string
	// AdmitOnly runs the scheduler's enqueue action alone: PodGroups are
	// admitted and the controller creates every pod, but nothing is
	// bound, so the run measures the controller's own rate of pod
	// creation, to set against the scheduler's binding rate.
	AdmitOnly bool
	Logf      func(format string, args ...any)
}

// ControllerResult is what the Job controller benchmark measured. Times are
// seconds from the first Job's creation.
type ControllerResult struct {
	Nodes      int          `json:"nodes"`
	Jobs       int          `json:"jobs"`
	Pods       int          `json:"pods"`
	Limits     ClientLimits `json:"clientLimits"`
	SubmitSecs float64      `json:"submitSeconds"`
	// AllPodsSecs: every pod exists; AllInqueueSecs: every PodGroup was
	// admitted (Inqueue or later); AllBoundSecs: every pod is bound.
	AllPodsSecs    float64 `json:"allPodsSeconds"`
	AllInqueueSecs float64 `json:"allInqueueSeconds"`
	AllBoundSecs   float64 `json:"allBoundSeconds"`
	// PodsCreatedPerSec and PodsBoundPerSec are rates from the first to the
	// last pod created, and bound.
	PodsCreatedPerSec float64 `json:"podsCreatedPerSecond"`
	PodsBoundPerSec   float64 `json:"podsBoundPerSecond"`
	// ControllerCPUSecs and ControllerPeakRSS are caldera-controller-manager's.
	ControllerCPUSecs float64 `json:"controllerCPUSeconds"`
	ControllerPeakRSS int64   `json:"controllerPeakRSSBytes"`
	SchedulerCPUSecs  float64 `json:"schedulerCPUSeconds"`
	APIServerCPUSecs  float64 `json:"apiServerCPUSeconds"`
	// ControllerWrites and SchedulerWrites are each component's write
	// requests, from the API server's audit log.
	ControllerWrites WriteCounts `json:"controllerWrites"`
	SchedulerWrites  WriteCounts `json:"schedulerWrites"`
}

// RunControllers submits the Jobs at once to a cluster running
// caldera-controller-manager and caldera-scheduler, and follows pods and
// PodGroups until every pod is bound.
func RunControllers(ctx context.Context, o ControllerOptions) (_ *ControllerResult, err error) {
	dir := o.WorkDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "caldera-perf-controllers-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	w := &Workload{
		Nodes: NodeShape{CPU: resource.MustParse("32"), Memory: resource.MustParse("128Gi"), Pods: 110},
		Sizes: map[string]Size{"run": {Nodes: o.Nodes}},
	}
	o.Logf("starting the control plane with %d nodes", o.Nodes)
	env, err := StartEnvironment(ctx, o.BinDir, dir, w, "run")
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, env.Stop()) }()

	cmDir := filepath.Join(dir, "controller-manager")
	if err := os.MkdirAll(cmDir, 0o755); err != nil {
		return nil, err
	}
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	health := fmt.Sprintf("127.0.0.1:%d", port)
	cm, err := controlplane.StartComponent(ctx, controlplane.ComponentOptions{
		Name:   "caldera-controller-manager",
		Binary: filepath.Join(o.BinDir, "caldera-controller-manager"),
		Args: []string{
			"--kubeconfig=" + env.Kubeconfig(),
			"--leader-elect=false",
			"--health-probe-bind-address=" + health,
			"--metrics-bind-address=0",
			fmt.Sprintf("--kube-api-qps=%v", o.Limits.QPS),
			fmt.Sprintf("--kube-api-burst=%d", o.Limits.Burst),
		},
		Dir:      cmDir,
		ReadyURL: "http://" + health + "/readyz",
	})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cm.Stop()) }()
	schedDir := filepath.Join(dir, "scheduler")
	if err := os.MkdirAll(schedDir, 0o755); err != nil {
		return nil, err
	}
	so := startOptions{Limits: o.Limits}
	if o.AdmitOnly {
		so.Actions = []string{"enqueue"}
	}
	sched, err := startCaldera(ctx, env, schedDir, so)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, sched.Stop()) }()

	wc, err := client.NewWithWatch(env.restCfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	const ns = "perf-jobs"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	follow := newFollower(o.Jobs, o.Jobs*o.PodsPerJob)
	follow.noBinds = o.AdmitOnly
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	// Informers, not bare watches: they list and watch again when a watch
	// ends, so no event is missed.
	podInformer := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) {
			return env.Clientset.CoreV1().Pods(ns).List(ctx, lo)
		},
		WatchFuncWithContext: func(ctx context.Context, lo metav1.ListOptions) (watch.Interface, error) {
			return env.Clientset.CoreV1().Pods(ns).Watch(ctx, lo)
		},
	}, &corev1.Pod{}, 0, toolscache.Indexers{})
	if _, err := podInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { follow.pod(obj) },
		UpdateFunc: func(_, obj any) { follow.pod(obj) },
	}); err != nil {
		return nil, err
	}
	groupInformer := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) {
			var l schedulingv1beta1.PodGroupList
			err := wc.List(ctx, &l, client.InNamespace(ns), &client.ListOptions{Raw: &lo})
			return &l, err
		},
		WatchFuncWithContext: func(ctx context.Context, lo metav1.ListOptions) (watch.Interface, error) {
			return wc.Watch(ctx, &schedulingv1beta1.PodGroupList{}, client.InNamespace(ns), &client.ListOptions{Raw: &lo})
		},
	}, &schedulingv1beta1.PodGroup{}, 0, toolscache.Indexers{})
	if _, err := groupInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { follow.group(obj) },
		UpdateFunc: func(_, obj any) { follow.group(obj) },
	}); err != nil {
		return nil, err
	}
	go podInformer.RunWithContext(watchCtx)
	go groupInformer.RunWithContext(watchCtx)
	if !toolscache.WaitForCacheSync(watchCtx.Done(), podInformer.HasSynced, groupInformer.HasSynced) {
		return nil, errors.New("the benchmark's informers did not sync")
	}

	// A Job whose PodGroup appears shows the controller's caches synced
	// and its workers running: Jobs it lists at start-up are queued
	// behind every later event (controller-runtime's low priority for an
	// informer's initial list), which would make a start-up race of the
	// measurement.
	if err := warmUp(ctx, env); err != nil {
		return nil, err
	}

	names := make([]int, o.Jobs)
	for i := range names {
		names[i] = i
	}
	offset, err := auditOffset(env.AuditLog)
	if err != nil {
		return nil, err
	}
	o.Logf("creating %d jobs of %d pods", o.Jobs, o.PodsPerJob)
	start := time.Now()
	follow.setStart(start)
	if err := forEach(ctx, names, creationWorkers, func(ctx context.Context, i int) error {
		return env.Client.Create(ctx, benchJob(ns, fmt.Sprintf("job-%04d", i), int32(o.PodsPerJob)))
	}); err != nil {
		return nil, fmt.Errorf("creating jobs: %w", err)
	}
	res := &ControllerResult{Nodes: o.Nodes, Jobs: o.Jobs, Pods: o.Jobs * o.PodsPerJob, Limits: o.Limits,
		SubmitSecs: time.Since(start).Seconds()}
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
wait:
	for {
		select {
		case <-follow.done:
			break wait
		case <-tick.C:
			o.Logf("%s", follow.progress())
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the pods: %w (%s)", ctx.Err(), follow.progress())
		}
	}
	follow.fill(res)
	if u, err := readProcessUsage(cm.PID()); err == nil {
		res.ControllerCPUSecs, res.ControllerPeakRSS = u.CPUSeconds, u.PeakRSSBytes
	}
	if u, err := readProcessUsage(sched.PID()); err == nil {
		res.SchedulerCPUSecs = u.CPUSeconds
	}
	if u, err := readProcessUsage(env.apiServerPID()); err == nil {
		res.APIServerCPUSecs = u.CPUSeconds
	}
	if res.ControllerWrites, err = countWrites(env.AuditLog, offset, "caldera-controller-manager"); err != nil {
		return nil, err
	}
	if res.SchedulerWrites, err = countWrites(env.AuditLog, offset, "caldera-scheduler"); err != nil {
		return nil, err
	}
	return res, nil
}

// warmUp creates a one-pod Job in a namespace of its own and waits for its
// PodGroup.
func warmUp(ctx context.Context, env *Environment) error {
	const ns = "perf-warmup"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	job := benchJob(ns, "warmup", 1)
	if err := env.Client.Create(ctx, job); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var l schedulingv1beta1.PodGroupList
		if err := env.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return false, err
		}
		return len(l.Items) > 0, nil
	})
}

func benchJob(ns, name string, pods int32) *batchv1alpha1.Job {
	return &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1alpha1.JobSpec{
			SchedulerName: "volcano",
			Queue:         schedulingv1beta1.DefaultQueue,
			MinAvailable:  pods,
			Tasks: []batchv1alpha1.TaskSpec{{
				Name:     "worker",
				Replicas: pods,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					}}},
				}},
			}},
		},
	}
}

// follower records when each pod was first seen and first seen bound, and
// when each PodGroup was first seen admitted.
type follower struct {
	mu                 sync.Mutex
	start              time.Time
	wantGroups, wantPs int
	created, bound     map[types.UID]time.Time
	admitted           map[types.UID]time.Time
	done               chan struct{}
	closed             bool
	// noBinds: done does not wait for pods to be bound.
	noBinds bool
}

func newFollower(groups, pods int) *follower {
	return &follower{wantGroups: groups, wantPs: pods, done: make(chan struct{}),
		created: map[types.UID]time.Time{}, bound: map[types.UID]time.Time{}, admitted: map[types.UID]time.Time{}}
}

func (f *follower) setStart(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.start = t
}

func (f *follower) pod(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, seen := f.created[p.UID]; !seen {
		f.created[p.UID] = now
	}
	if _, seen := f.bound[p.UID]; !seen && p.Spec.NodeName != "" {
		f.bound[p.UID] = now
	}
	f.check()
}

func (f *follower) group(obj any) {
	pg, ok := obj.(*schedulingv1beta1.PodGroup)
	if !ok {
		return
	}
	switch pg.Status.Phase {
	case schedulingv1beta1.PodGroupInqueue, schedulingv1beta1.PodGroupRunning, schedulingv1beta1.PodGroupCompleted:
	default:
		return
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, seen := f.admitted[pg.UID]; !seen {
		f.admitted[pg.UID] = now
	}
	f.check()
}

// check closes done once everything was seen; f.mu is held.
func (f *follower) check() {
	if !f.closed && (f.noBinds || len(f.bound) >= f.wantPs) && len(f.created) >= f.wantPs && len(f.admitted) >= f.wantGroups {
		f.closed = true
		close(f.done)
	}
}

func (f *follower) progress() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("%d of %d pods created, %d bound, %d of %d PodGroups admitted",
		len(f.created), f.wantPs, len(f.bound), len(f.admitted), f.wantGroups)
}

func (f *follower) fill(r *ControllerResult) {
	f.mu.Lock()
	defer f.mu.Unlock()
	span := func(m map[types.UID]time.Time) (first, last time.Time) {
		for _, t := range m {
			if first.IsZero() || t.Before(first) {
				first = t
			}
			if t.After(last) {
				last = t
			}
		}
		return first, last
	}
	rate := func(n int, first, last time.Time) float64 {
		if d := last.Sub(first).Seconds(); d > 0 {
			return float64(n) / d
		}
		return 0
	}
	cf, cl := span(f.created)
	bf, bl := span(f.bound)
	_, al := span(f.admitted)
	r.AllPodsSecs = cl.Sub(f.start).Seconds()
	if len(f.bound) > 0 {
		r.AllBoundSecs = bl.Sub(f.start).Seconds()
	}
	r.AllInqueueSecs = al.Sub(f.start).Seconds()
	r.PodsCreatedPerSec = rate(len(f.created), cf, cl)
	r.PodsBoundPerSec = rate(len(f.bound), bf, bl)
}

// WriteControllerResult writes the result as JSON into dir.
func WriteControllerResult(dir string, r *ControllerResult) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, fmt.Sprintf("controllers-%d-jobs.json", r.Jobs)), append(b, '\n'), 0o644)
}
