// Package evaluatortest builds a kube-scheduler evaluator for tests and
// benchmarks of scheduling decisions outside podfit.
package evaluatortest

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
)

// NewEvaluator builds kube-scheduler's plugins over an empty fake
// clientset, for tests and benchmarks of scheduling decisions: the plugins
// find no volumes, claims or classes, and judge pods and nodes alone. It
// is closed when tb ends.
func NewEvaluator(tb testing.TB) *podfit.Evaluator {
	tb.Helper()
	return NewEvaluatorWith(tb, podfit.Options{})
}

// NewEvaluatorWith is NewEvaluator with options (the informer factory and
// clientset are set here) over a fake clientset holding objs (claims,
// slices, classes the plugins read through their informers).
func NewEvaluatorWith(tb testing.TB, o podfit.Options, objs ...runtime.Object) *podfit.Evaluator {
	tb.Helper()
	e, _ := NewEvaluatorAndClient(tb, o, objs...)
	return e
}

// NewEvaluatorAndClient is NewEvaluatorWith, also returning the fake
// clientset, to change what the informers serve.
func NewEvaluatorAndClient(tb testing.TB, o podfit.Options, objs ...runtime.Object) (*podfit.Evaluator, kubernetes.Interface) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	cs := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(cs, 0)
	o.InformerFactory, o.ClientSet = factory, cs
	e, err := podfit.New(ctx, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Close() })
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return e, cs
}
