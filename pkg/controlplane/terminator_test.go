package controlplane

import (
	"fmt"

	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

func terminatingPod(uid types.UID, node string, deleting bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train-worker-0", UID: uid}, Spec: corev1.PodSpec{NodeName: node}}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{}
	}
	return p
}

func TestTerminate(t *testing.T) {
	simulated := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "sim-0", Annotations: map[string]string{KwokNodeAnnotation: "fake"}}}
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "real-0"}}
	for _, tc := range []struct {
		name string
		// stored is the pod the informer holds under the name; ref the
		// incarnation queued.
		stored     *corev1.Pod
		ref        types.UID
		wantDelete bool
	}{
		{"a terminating pod on a simulated node is deleted for good", terminatingPod("a", "sim-0", true), "a", true},
		{"its successor of the same name is left alone", terminatingPod("b", "sim-0", false), "a", false},
		{"a terminating successor is not deleted for its predecessor", terminatingPod("b", "sim-0", true), "a", false},
		{"a pod not being deleted is left alone", terminatingPod("a", "sim-0", false), "a", false},
		{"a pod on a node kwok does not simulate is left alone", terminatingPod("a", "real-0", true), "a", false},
		{"a pod on a node not known is left alone", terminatingPod("a", "gone-0", true), "a", false},
		{"a pod gone already needs nothing", nil, "a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			pods := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
			nodes := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
			for _, n := range []*corev1.Node{simulated, other} {
				if err := nodes.Add(n); err != nil {
					t.Fatal(err)
				}
			}
			if tc.stored != nil {
				if err := pods.Add(tc.stored); err != nil {
					t.Fatal(err)
				}
			}
			term := &terminator{client: cs, pods: pods, nodes: nodes}
			if err := term.terminate(t.Context(), podRef{"default", "train-worker-0", tc.ref}); err != nil {
				t.Fatal(err)
			}
			var deletes []k8stesting.DeleteActionImpl
			for _, a := range cs.Actions() {
				if d, ok := a.(k8stesting.DeleteActionImpl); ok {
					deletes = append(deletes, d)
				}
			}
			if !tc.wantDelete {
				if len(deletes) != 0 {
					t.Errorf("deleted %v, want nothing deleted", deletes)
				}
				return
			}
			if len(deletes) != 1 {
				t.Fatalf("deletes %v, want one", deletes)
			}
			o := deletes[0].DeleteOptions
			if o.GracePeriodSeconds == nil || *o.GracePeriodSeconds != 0 || o.Preconditions == nil || o.Preconditions.UID == nil || *o.Preconditions.UID != tc.ref {
				t.Errorf("delete options %+v, want no grace and the UID %q as precondition", o, tc.ref)
			}
		})
	}
}

func TestRequeueNode(t *testing.T) {
	pods := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{byNode: podNode})
	for i, p := range []*corev1.Pod{
		terminatingPod("a", "sim-0", true),
		terminatingPod("b", "sim-0", false),
		terminatingPod("c", "sim-1", true),
		terminatingPod("d", "", true),
	} {
		p.Name = fmt.Sprintf("pod-%d", i)
		if err := pods.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	term := &terminator{pods: pods, queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[podRef]())}
	defer term.queue.ShutDown()
	term.requeueNode("sim-0")
	if n := term.queue.Len(); n != 1 {
		t.Fatalf("%d pods queued, want 1 (the one being deleted on sim-0)", n)
	}
	if ref, _ := term.queue.Get(); ref != (podRef{"default", "pod-0", "a"}) {
		t.Errorf("queued %+v, want pod-0 (uid a)", ref)
	}
}
