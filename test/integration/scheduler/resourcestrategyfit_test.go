//go:build integration

package scheduler

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestResourceStrategyFitExample runs the documented example
// (docs/resource-strategy-fit.md) with the scheduler configuration
// examples/scheduler/resource-strategy-fit.conf, on two GPU nodes and two
// CPU nodes: the GPU workers pack onto one GPU node, the CPU-only pods
// spread over the CPU nodes and leave the GPU nodes alone.
func TestResourceStrategyFitExample(t *testing.T) {
	const ns = "rsf-example"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	var specs []controlplane.NodeSpec
	for i := range 2 {
		g := cpuNode(fmt.Sprintf("%s-gpu-%d", ns, i), "32")
		g.Capacity["nvidia.com/gpu"] = resource.MustParse("8")
		c := cpuNode(fmt.Sprintf("%s-cpu-%d", ns, i), "32")
		for _, s := range []*controlplane.NodeSpec{&g, &c} {
			s.Labels = map[string]string{"test": ns}
			specs = append(specs, *s)
		}
	}
	createNodes(t, specs)
	stop, err := fw.StartSchedulerFile("../../../examples/scheduler/resource-strategy-fit.conf")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()

	gang := func(name string, pods int, gpus string) {
		pg := &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       schedulingv1beta1.PodGroupSpec{MinMember: int32(pods), Queue: "default"},
		}
		if err := fw.Client.Create(t.Context(), pg); err != nil {
			t.Fatal(err)
		}
		for i := range pods {
			spec := podSpec(ns, "2")
			if gpus != "" {
				spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse(gpus)
				spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}
			}
			createPod(t, ns, fmt.Sprintf("%s-%d", name, i), map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: name}, spec)
		}
	}
	nodesOf := func(gangName string, pods int) map[string]int {
		t.Helper()
		var got map[string]int
		poll.Eventually(t, t.Context(), 60*time.Second, gangName+" bound", func() (bool, string) {
			got = map[string]int{}
			bound := 0
			for _, p := range listPods(t, ns) {
				if p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] == gangName && p.Spec.NodeName != "" {
					got[p.Spec.NodeName]++
					bound++
				}
			}
			return bound == pods, describePods(listPods(t, ns))
		})
		return got
	}

	gang("workers", 4, "1")
	if got := nodesOf("workers", 4); len(got) != 1 || (got[ns+"-gpu-0"] != 4 && got[ns+"-gpu-1"] != 4) {
		t.Errorf("workers on %v, want all 4 on one GPU node", got)
	}
	gang("masters", 4, "")
	if got := nodesOf("masters", 4); got[ns+"-cpu-0"] != 2 || got[ns+"-cpu-1"] != 2 {
		t.Errorf("masters on %v, want 2 on each CPU node", got)
	}
}
