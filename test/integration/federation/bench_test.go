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
	"github.com/caldera-sh/caldera/pkg/federation/dispatcher"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
)

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// BenchmarkDispatchOnAPIServer: 100 Ready member clusters with room for
// everything, 10 queues, and 10,000 suspended bindings created as fast as
// four clients can while the dispatcher runs against the real API server.
// It reports creations and releases per second (from the first creation
// to the last creation, and to the last release) and the p50 and p99 time
// from a binding's creation to its release. Releases cannot outrun
// creations: on a small machine the clients, the API server and the
// dispatcher share its cores.
func BenchmarkDispatchOnAPIServer(b *testing.B) {
	const bindings, clusters, queues = 10000, 100, 10
	ctx := b.Context()
	c := fw.Client
	ns := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	for i := range clusters {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-member-%03d", ns, i)}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
		if err := c.Create(ctx, cl); err != nil {
			b.Fatal(err)
		}
		cl.Status = clusterv1alpha1.ClusterStatus{
			Conditions:      []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.Now()}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10000")}},
		}
		if err := c.Status().Update(ctx, cl); err != nil {
			b.Fatal(err)
		}
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
	created, released := map[string]time.Time{}, map[string]time.Time{}
	inf, err := ca.GetInformer(rctx, &workv1alpha2.ResourceBinding{})
	if err != nil {
		b.Fatal(err)
	}
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		rb := obj.(*workv1alpha2.ResourceBinding)
		if rb.Namespace != ns || rb.Spec.Suspension == nil || rb.Spec.Suspension.Scheduling == nil || *rb.Spec.Suspension.Scheduling {
			return
		}
		mu.Lock()
		if _, ok := released[rb.Name]; !ok {
			released[rb.Name] = time.Now()
		}
		mu.Unlock()
	}})
	go func() { _ = ca.Start(rctx) }()
	d := dispatcher.New(dc, ca, record.NewFakeRecorder(bindings), clock.RealClock{}, dispatcher.Options{Heartbeat: time.Second})
	go func() { _ = d.Run(rctx) }()

	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < bindings; i += 4 {
				rb := binding(ns, fmt.Sprintf("j%05d", i))
				rb.Annotations = map[string]string{"dispatch.caldera.sh/queue": fmt.Sprintf("%s-q%d", ns, i%queues)}
				if err := c.Create(ctx, rb); err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				created[rb.Name] = time.Now()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		mu.Lock()
		n := len(released)
		mu.Unlock()
		if n == bindings {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d released in 5 minutes", n, bindings)
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	var last, lastCreated time.Time
	lat := make([]time.Duration, 0, bindings)
	for name, r := range released {
		last = latest(last, r)
		lastCreated = latest(lastCreated, created[name])
		lat = append(lat, max(0, r.Sub(created[name])))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(bindings)/lastCreated.Sub(start).Seconds(), "creates/s")
	b.ReportMetric(float64(bindings)/last.Sub(start).Seconds(), "releases/s")
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Milliseconds()), "p99-ms")
}
