package podfit

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// newTestEvaluator builds an evaluator whose informers serve objs (claims,
// classes, volumes) from a fake clientset: no API-server behaviour is under
// test here, only what the plugins read.
func newTestEvaluator(t testing.TB, objs ...runtime.Object) (*Evaluator, *fake.Clientset) {
	t.Helper()
	return newTestEvaluatorWith(t, Options{}, objs...)
}

// newTestEvaluatorWith is newTestEvaluator with options (the informer
// factory and clientset are set here).
func newTestEvaluatorWith(t testing.TB, o Options, objs ...runtime.Object) (*Evaluator, *fake.Clientset) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(cs, 0)
	o.InformerFactory, o.ClientSet = factory, cs
	e, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	return e, cs
}

// nodeInfos builds the snapshot nodes with the pods bound to them placed
// as running tasks.
func nodeInfos(nodes []*corev1.Node, pods []*corev1.Pod) []*api.NodeInfo {
	byName := map[string]*api.NodeInfo{}
	var out []*api.NodeInfo
	for _, n := range nodes {
		ni := api.NewNodeInfo(n)
		ni.SetMirror(NewNodeMirror())
		byName[n.Name] = ni
		out = append(out, ni)
	}
	for _, p := range pods {
		place(byName[p.Spec.NodeName], p, api.Running)
	}
	return out
}

// place puts a pod on a node as a task in the given status, as the
// scheduler does when it places a pod in a cycle.
func place(n *api.NodeInfo, pod *corev1.Pod, status api.TaskStatus) *api.TaskInfo {
	task := api.NewTaskInfo(pod, api.NewJobID(pod.Namespace, "job"))
	task.Status = status
	task.NodeName = n.Name
	n.AddTask(task)
	return task
}

func nodeByName(nodes []*api.NodeInfo, name string) *api.NodeInfo {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

func plfeatureDefaults() plfeature.Features {
	return plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
}
