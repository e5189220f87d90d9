//go:build integration

package federation

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	dispatchcontroller "github.com/caldera-sh/caldera/pkg/federation/dispatch/controller"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/poll"
)

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// BenchmarkDispatchOnAPIServer measures the dispatcher against the real
// API server with 100 member clusters and 10 queues, in two phases.
//
// Backlog: 10,000 bindings wait, held, while every cluster is NotReady;
// then the clusters turn Ready with room for all of them. It reports
// backlog-releases/s, from the first cluster turning Ready to the last
// release seen.
//
// Stream: with room, 1,000 more bindings are created at 100 per second,
// beside the 10,000 released ones. It reports the p50 and p99 time from a
// creation returning to the release being seen by a watch.
//
// Ceiling: beforehand, 10,000 bindings of work outside any queue (which the
// dispatcher leaves alone) are changed as a release changes a binding, by a
// plain client with as many patches in flight as the dispatcher: the API
// server's own rate for such patches on this machine, api-patches/s, the
// most the dispatcher could reach.
func BenchmarkDispatchOnAPIServer(b *testing.B) {
	const backlog, stream, clusters, queues = 10000, 1000, 100, 10
	const streamEvery = 10 * time.Millisecond
	ctx := b.Context()
	c := fw.Client
	ns := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	var members []*clusterv1alpha1.Cluster
	setReady := func(cl *clusterv1alpha1.Cluster, ready metav1.ConditionStatus) error {
		cl.Status = clusterv1alpha1.ClusterStatus{
			Conditions:      []metav1.Condition{{Type: "Ready", Status: ready, Reason: "Bench", LastTransitionTime: metav1.Now()}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10000")}},
		}
		return c.Status().Update(ctx, cl)
	}
	for i := range clusters {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-member-%03d", ns, i)}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
		if err := c.Create(ctx, cl); err != nil {
			b.Fatal(err)
		}
		if err := setReady(cl, metav1.ConditionFalse); err != nil {
			b.Fatal(err)
		}
		members = append(members, cl)
	}
	for i := range queues {
		if err := c.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-q%d", ns, i)}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
			b.Fatal(err)
		}
	}

	rctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
	defer cancel()
	cfg := fw.RESTConfig()
	cfg.QPS, cfg.Burst = 2000, 4000
	ca, err := cache.New(cfg, cache.Options{Scheme: fw.Scheme, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		b.Fatal(err)
	}
	dc, err := client.New(cfg, client.Options{Scheme: fw.Scheme, Cache: &client.CacheOptions{Reader: ca}})
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	held, released := map[string]bool{}, map[string]time.Time{}
	inf, err := ca.GetInformer(rctx, &workv1alpha2.ResourceBinding{})
	if err != nil {
		b.Fatal(err)
	}
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		rb := obj.(*workv1alpha2.ResourceBinding)
		if rb.Namespace != ns {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if _, ok := rb.Annotations[dispatch.HeldSinceAnnotation]; ok {
			held[rb.Name] = true
		}
		if len(rb.Spec.Clusters) > 0 {
			if _, ok := released[rb.Name]; !ok {
				released[rb.Name] = time.Now()
			}
		}
	}})
	go func() { _ = ca.Start(rctx) }()
	d := dispatchcontroller.New(dc, ca, record.NewFakeRecorder(backlog+stream), clock.RealClock{}, dispatchcontroller.Options{Heartbeat: time.Second})
	go func() { _ = d.Run(rctx) }()
	waitFor := func(what string, n int, count func() int) {
		poll.Eventually(b, ctx, 5*time.Minute, fmt.Sprintf("%d %s", n, what), func() (bool, string) {
			mu.Lock()
			got := count()
			mu.Unlock()
			return got >= n, fmt.Sprintf("%d of %d", got, n)
		})
	}
	newBinding := func(i int) *workv1alpha2.ResourceBinding {
		rb := binding(ns, fmt.Sprintf("j%05d", i))
		rb.Annotations = map[string]string{"dispatch.caldera.sh/queue": fmt.Sprintf("%s-q%d", ns, i%queues)}
		return rb
	}

	// The ceiling: plain patches of bindings the dispatcher does not track.
	ceilingNS := ns + "-ceiling"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ceilingNS}}); err != nil {
		b.Fatal(err)
	}
	plain := make([]*workv1alpha2.ResourceBinding, backlog)
	parallelDo(backlog, 8, func(i int) {
		rb := binding(ceilingNS, fmt.Sprintf("d%05d", i))
		rb.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ceilingNS, Name: rb.Name}
		if err := c.Create(ctx, rb); err != nil {
			b.Error(err)
		}
		plain[i] = rb
	})
	ceilingStart := time.Now()
	parallelDo(backlog, dispatchcontroller.PatchWorkers, func(i int) {
		rb := plain[i]
		patched := rb.DeepCopy()
		patched.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: members[i%clusters].Name}}
		if err := c.Patch(ctx, patched, client.MergeFrom(rb)); err != nil {
			b.Error(err)
		}
	})
	// Reported after ResetTimer, which drops metrics reported before it.
	ceiling := float64(backlog) / time.Since(ceilingStart).Seconds()

	// The backlog, held while no cluster is Ready.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < backlog; i += 8 {
				if err := c.Create(ctx, newBinding(i)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	waitFor("bindings marked held", backlog, func() int { return len(held) })

	b.ResetTimer()
	start := time.Now()
	parallelDo(clusters, 16, func(i int) {
		if err := setReady(members[i], metav1.ConditionTrue); err != nil {
			b.Error(err)
		}
	})
	waitFor("backlog bindings released", backlog, func() int { return len(released) })
	mu.Lock()
	var last time.Time
	for _, r := range released {
		last = latest(last, r)
	}
	mu.Unlock()
	b.ReportMetric(float64(backlog)/last.Sub(start).Seconds(), "backlog-releases/s")
	b.ReportMetric(ceiling, "api-patches/s")

	// The stream, at a steady rate.
	created := map[string]time.Time{}
	tick := time.NewTicker(streamEvery)
	for i := backlog; i < backlog+stream; i++ {
		<-tick.C
		rb := newBinding(i)
		if err := c.Create(ctx, rb); err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		created[rb.Name] = time.Now()
		mu.Unlock()
	}
	tick.Stop()
	waitFor("stream bindings released", backlog+stream, func() int { return len(released) })
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	lat := make([]time.Duration, 0, stream)
	for name, at := range created {
		lat = append(lat, max(0, released[name].Sub(at)))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "stream-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "stream-p99-ms")
}

// parallelDo runs f(0..n-1) on workers goroutines.
func parallelDo(n, workers int, f func(i int)) {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				f(i)
			}
		}()
	}
	wg.Wait()
}
