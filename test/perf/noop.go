package perf

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// NoopBinder is the ceiling the schedulers are measured against: a binder
// with no scheduling logic that binds every pending pod of its scheduler
// name to the next node in turn, one binding per pod, with the same client
// limits and as many requests in flight as caldera-scheduler's binder. It
// runs in the benchmark's process; its CPU and memory are not reported.
const NoopBinder = "noop"

// noopWorkers is caldera-scheduler's default binder concurrency.
const noopWorkers = 64

// noopProcess is the no-op binder running in this process.
type noopProcess struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (p *noopProcess) PID() int { return os.Getpid() }

func (p *noopProcess) Stop() error {
	p.cancel()
	<-p.done
	return nil
}

func startNoop(ctx context.Context, env *Environment, _ string, o startOptions) (schedulerProcess, error) {
	cfg := rest.CopyConfig(env.restCfg)
	cfg.UserAgent = "noop-binder"
	cfg.QPS, cfg.Burst = o.Limits.QPS, int(o.Limits.Burst)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no nodes to bind to")
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &noopProcess{cancel: cancel, done: make(chan struct{})}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.FieldSelector = fields.AndSelectors(
			fields.OneTermEqualSelector("spec.schedulerName", NoopBinder),
			fields.OneTermEqualSelector("spec.nodeName", "")).String()
	}))
	queue := workqueue.NewTyped[*corev1.Pod]()
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*corev1.Pod); ok {
				queue.Add(pod)
			}
		},
	}); err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	var next atomic.Uint64
	var wg sync.WaitGroup
	for range noopWorkers {
		wg.Go(func() {
			for {
				pod, shutdown := queue.Get()
				if shutdown {
					return
				}
				node := names[(next.Add(1)-1)%uint64(len(names))]
				b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
					Target: corev1.ObjectReference{Kind: "Node", Name: node}}
				// A failed bind is not retried: the run reports the pod
				// unbound.
				_ = cs.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{})
				queue.Done(pod)
			}
		})
	}
	go func() {
		<-ctx.Done()
		queue.ShutDown()
		wg.Wait()
		factory.Shutdown()
		close(p.done)
	}()
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		_ = p.Stop()
		return nil, fmt.Errorf("the no-op binder's pod watch did not sync")
	}
	return p, nil
}
