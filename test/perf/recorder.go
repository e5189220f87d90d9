package perf

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
)

// bindRecorder watches the pods of one namespace and records when each one's
// spec.nodeName first appears: the bind time, as a client watching the API
// server sees it. Both schedulers are timed by this same watch.
type bindRecorder struct {
	mu      sync.Mutex
	seen    map[string]bool
	boundAt map[string]time.Time
	node    map[string]string
	// startLag is, per pod seen Running, the time from its bind to that.
	startLag map[string]time.Duration
	// rebound counts pods whose nodeName changed once set; the API server
	// should make that impossible.
	rebound  int
	lastBind time.Time
	informer toolscache.SharedIndexInformer
}

// startBindRecorder starts watching ns and waits for the initial list.
func startBindRecorder(ctx context.Context, cs kubernetes.Interface, ns string) (*bindRecorder, error) {
	r := &bindRecorder{seen: map[string]bool{}, boundAt: map[string]time.Time{}, node: map[string]string{}, startLag: map[string]time.Duration{}}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().Pods(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods(ns).Watch(ctx, o)
		},
	}
	r.informer = toolscache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, toolscache.Indexers{})
	// Only the name, nodeName and phase are needed; 10,000 full pods are
	// not.
	if err := r.informer.SetTransform(func(obj any) (any, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return obj, nil
		}
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, ResourceVersion: pod.ResourceVersion},
			Spec:       corev1.PodSpec{NodeName: pod.Spec.NodeName},
			Status:     corev1.PodStatus{Phase: pod.Status.Phase},
		}, nil
	}); err != nil {
		return nil, err
	}
	if _, err := r.informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.observe(obj) },
		UpdateFunc: func(_, obj any) { r.observe(obj) },
	}); err != nil {
		return nil, err
	}
	go r.informer.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), r.informer.HasSynced) {
		return nil, fmt.Errorf("pod watch of %s did not sync: %w", ns, context.Cause(ctx))
	}
	return r, nil
}

func (r *bindRecorder) observe(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[pod.Name] = true
	if pod.Spec.NodeName == "" {
		return
	}
	if prev, ok := r.node[pod.Name]; ok {
		if prev != pod.Spec.NodeName {
			r.rebound++
		}
		if _, started := r.startLag[pod.Name]; !started && pod.Status.Phase == corev1.PodRunning {
			r.startLag[pod.Name] = now.Sub(r.boundAt[pod.Name])
		}
		return
	}
	r.node[pod.Name] = pod.Spec.NodeName
	r.boundAt[pod.Name] = now
	r.lastBind = now
}

// seenCount is the number of pods the watch has seen.
func (r *bindRecorder) seenCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// progress returns the number of bound pods and the time of the last bind.
func (r *bindRecorder) progress() (int, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.boundAt), r.lastBind
}

// boundTime returns when a pod was seen bound.
func (r *bindRecorder) boundTime(pod string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.boundAt[pod]
	return t, ok
}

// nodeOf returns the node a pod was bound to.
func (r *bindRecorder) nodeOf(pod string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.node[pod]
}

func (r *bindRecorder) rebinds() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rebound
}

// startLags returns, for the pods seen Running, the seconds from their
// bind to that.
func (r *bindRecorder) startLags() []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]float64, 0, len(r.startLag))
	for _, d := range r.startLag {
		out = append(out, d.Seconds())
	}
	return out
}
