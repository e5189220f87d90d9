//go:build integration

package job

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	var nodes []controlplane.NodeSpec
	for i := range 10 {
		nodes = append(nodes, controlplane.NodeSpec{Name: fmt.Sprintf("n%d", i), Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"), corev1.ResourcePods: resource.MustParse("200"),
		}})
	}
	os.Exit(framework.Main(m, framework.Options{Nodes: nodes, Setup: func(ctx context.Context, f *framework.Framework) (func(), error) {
		if err := f.Client.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
			return nil, err
		}
		stopScheduler, err := f.StartScheduler(framework.SchedulerConfig)
		if err != nil {
			return nil, err
		}
		stopControllers := f.StartControllerManager(nil)
		return func() {
			for _, stop := range []func() error{stopControllers, stopScheduler} {
				if err := stop(); err != nil {
					fmt.Fprintln(os.Stderr, err)
				}
			}
		}, nil
	}}, &fw))
}
