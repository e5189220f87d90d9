package controlplane

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// A pod being deleted gracefully keeps its object, with a deletion
// timestamp, until its node's kubelet has stopped it and deletes it for
// good. The terminator does that last step for the simulated nodes, as a
// kubelet does: it deletes the pod with no grace left and with the pod's
// UID as a precondition, so that a successor of the same name (a Job's
// pods are recreated under their old names) is never the one deleted.
// kwok's own delete stage deletes by name alone, and a late play of it
// deleted such successors; the stages here leave deletion to the
// terminator.
type terminator struct {
	client kubernetes.Interface
	pods   toolscache.Indexer
	nodes  toolscache.Indexer
	queue  workqueue.TypedRateLimitingInterface[podRef]
}

// podRef names one incarnation of a pod.
type podRef struct {
	namespace, name string
	uid             types.UID
}

// toTerminate says whether the terminator deletes the pod for good: it is
// being deleted and is bound to a simulated node.
func toTerminate(p *corev1.Pod, node *corev1.Node) bool {
	return p.DeletionTimestamp != nil && p.Spec.NodeName != "" && node != nil &&
		node.Annotations[KwokNodeAnnotation] == "fake"
}

// startTerminator runs a terminator against the API server until ctx ends.
func startTerminator(ctx context.Context, cfg *rest.Config) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(toolscache.TransformFunc(stripManagedFields)))
	podInf, nodeInf := f.Core().V1().Pods().Informer(), f.Core().V1().Nodes().Informer()
	if err := podInf.AddIndexers(toolscache.Indexers{byNode: podNode}); err != nil {
		return err
	}
	t := &terminator{client: cs, pods: podInf.GetIndexer(), nodes: nodeInf.GetIndexer(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[podRef](),
			workqueue.TypedRateLimitingQueueConfig[podRef]{Name: "terminator"})}
	enqueue := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && p.DeletionTimestamp != nil {
			t.queue.Add(podRef{p.Namespace, p.Name, p.UID})
		}
	}
	if _, err := podInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return err
	}
	// A pod waiting on its node (not seen yet, or not marked simulated yet)
	// is looked at again when the node appears or its mark changes; the
	// node's status updates (heartbeats) leave its pods alone.
	if _, err := nodeInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n, ok := obj.(*corev1.Node); ok {
				t.requeueNode(n.Name)
			}
		},
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*corev1.Node)
			n, ok2 := obj.(*corev1.Node)
			if ok1 && ok2 && o.Annotations[KwokNodeAnnotation] != n.Annotations[KwokNodeAnnotation] {
				t.requeueNode(n.Name)
			}
		},
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		t.queue.ShutDown()
		f.Shutdown()
	}()
	for range 4 {
		go t.work(ctx)
	}
	return nil
}

func stripManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// byNode indexes pods by the node they are bound to.
const byNode = "spec.nodeName"

func podNode(obj any) ([]string, error) {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}, nil
	}
	return nil, nil
}

// requeueNode looks again at the pods being deleted on one node.
func (t *terminator) requeueNode(node string) {
	objs, _ := t.pods.ByIndex(byNode, node)
	for _, obj := range objs {
		if p := obj.(*corev1.Pod); p.DeletionTimestamp != nil {
			t.queue.Add(podRef{p.Namespace, p.Name, p.UID})
		}
	}
}

func (t *terminator) work(ctx context.Context) {
	for {
		ref, quit := t.queue.Get()
		if quit {
			return
		}
		if err := t.terminate(ctx, ref); err != nil {
			klog.V(2).InfoS("Deleting a terminating pod", "pod", klog.KRef(ref.namespace, ref.name), "err", err)
			t.queue.AddRateLimited(ref)
		} else {
			t.queue.Forget(ref)
		}
		t.queue.Done(ref)
	}
}

// terminate deletes the incarnation ref of a pod for good, if it is still
// there and being deleted on a simulated node.
func (t *terminator) terminate(ctx context.Context, ref podRef) error {
	obj, ok, err := t.pods.GetByKey(ref.namespace + "/" + ref.name)
	if err != nil || !ok {
		return err
	}
	p := obj.(*corev1.Pod)
	if p.UID != ref.uid {
		return nil
	}
	var node *corev1.Node
	if n, ok, _ := t.nodes.GetByKey(p.Spec.NodeName); ok {
		node = n.(*corev1.Node)
	}
	if !toTerminate(p, node) {
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = t.client.CoreV1().Pods(p.Namespace).Delete(dctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &ref.uid},
	})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		// Another incarnation holds the name now: this one is gone.
		return nil
	}
	return fmt.Errorf("deleting pod %s/%s: %w", p.Namespace, p.Name, err)
}
