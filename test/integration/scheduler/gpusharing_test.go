//go:build integration

package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/test/poll"
)

const gpuSharingConf = "../../../examples/scheduler/gpu-sharing.conf"

// gpuNodes creates n nodes of two 16,000 MiB cards each, labelled test=ns.
func gpuNodes(t *testing.T, ns string, n int) {
	t.Helper()
	var specs []controlplane.NodeSpec
	for i := range n {
		s := cpuNode(fmt.Sprintf("%s-%d", ns, i), "32")
		s.Capacity[api.ResourceGPUNumber] = resource.MustParse("2")
		s.Capacity[api.ResourceGPUMemory] = resource.MustParse("32000")
		s.Labels = map[string]string{"test": ns}
		specs = append(specs, s)
	}
	createNodes(t, specs)
}

// placement is where a pod went: "node/cards", or "" while it waits.
func placement(p corev1.Pod) string {
	if p.Spec.NodeName == "" {
		return ""
	}
	return p.Spec.NodeName + "/" + p.Annotations[api.GPUIndexAnnotation]
}

// TestGPUSharingExample runs the documented example (docs/gpu-sharing.md):
// the Job examples/batch/gpu-sharing-inference.yaml under
// examples/scheduler/gpu-sharing.conf on two nodes of two cards. The four
// 4,000 MiB servers share one card, the trainer has the other card of the
// same node to itself, and the bind wrote each pod's card and the time it
// was chosen.
func TestGPUSharingExample(t *testing.T) {
	const ns = "gpu-sharing-example"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	gpuNodes(t, ns, 2)
	runSchedulerFile(t, gpuSharingConf)
	createExampleJob(t, ns, "../../../examples/batch/gpu-sharing-inference.yaml")
	pods := waitAllBound(t, ns, 5)
	servers := map[string]bool{}
	var trainer string
	for _, p := range pods {
		if p.Annotations[api.GPUPredicateTimeAnnotation] == "" {
			t.Errorf("%s has no %s annotation", p.Name, api.GPUPredicateTimeAnnotation)
		}
		if strings.Contains(p.Name, "server") {
			servers[placement(p)] = true
		} else {
			trainer = placement(p)
		}
	}
	if len(servers) != 1 {
		t.Fatalf("servers on %v, want one card for all four", servers)
	}
	for s := range servers {
		node, card, _ := strings.Cut(s, "/")
		tnode, tcard, _ := strings.Cut(trainer, "/")
		if node != tnode || card == tcard || card == "" || tcard == "" {
			t.Errorf("servers on %s, trainer on %s: want the trainer on the other card of the same node", s, trainer)
		}
	}
}

// TestGPUCardsSurviveRestart: what a card holds is read back from the pods'
// annotations by a restarted scheduler. Pods arrive one at a time, each its
// own job; every placement is the one binpack makes only if the
// scheduler knows each card's holders, and the last pod, which fits the
// pooled GPU memory of a node but no single card, waits with a reason
// naming cards.
func TestGPUCardsSurviveRestart(t *testing.T) {
	const ns = "gpu-restart"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	gpuNodes(t, ns, 2)
	n0, n1 := ns+"-0", ns+"-1"

	submit := func(name string, res corev1.ResourceName, qty string) {
		t.Helper()
		pg := &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "default"},
		}
		if err := fw.Client.Create(t.Context(), pg); err != nil {
			t.Fatal(err)
		}
		spec := podSpec(ns, "1")
		// Extended resources need limits; requests default to them.
		spec.Containers[0].Resources.Limits = corev1.ResourceList{res: resource.MustParse(qty)}
		createPod(t, ns, name, map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: name}, spec)
	}
	expect := func(name, want string) {
		t.Helper()
		poll.Eventually(t, t.Context(), 60*time.Second, name+" bound", func() (bool, string) {
			var p corev1.Pod
			if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
				return false, err.Error()
			}
			return p.Spec.NodeName != "", describePods([]corev1.Pod{p})
		})
		var p corev1.Pod
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
			t.Fatal(err)
		}
		if got := placement(p); got != want {
			t.Fatalf("%s placed on %s, want %s", name, got, want)
		}
	}

	stop, err := fw.StartSchedulerFile(gpuSharingConf)
	if err != nil {
		t.Fatal(err)
	}
	submit("a", api.ResourceGPUMemory, "10000")
	expect("a", n0+"/0")
	submit("b", api.ResourceGPUMemory, "6000") // the rest of card 0
	expect("b", n0+"/0")
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	stop, err = fw.StartSchedulerFile(gpuSharingConf)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	// A scheduler that forgot a or b would put c on card 0 of n0 again.
	submit("c", api.ResourceGPUMemory, "8000")
	expect("c", n0+"/1")
	submit("d", api.ResourceGPUNumber, "1") // n0 has no idle card left
	expect("d", n1+"/0")
	submit("e", api.ResourceGPUMemory, "14000")
	expect("e", n1+"/1")
	submit("f", api.ResourceGPUMemory, "4000") // the fullest card it fits
	expect("f", n0+"/1")
	// n0 has 4,000 free, n1 2,000: 5,000 fits no card.
	submit("g", api.ResourceGPUMemory, "5000")
	poll.Eventually(t, t.Context(), 30*time.Second, "g waits naming the cards", func() (bool, string) {
		var pg schedulingv1beta1.PodGroup
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "g"}, &pg); err != nil {
			return false, err.Error()
		}
		for _, c := range pg.Status.Conditions {
			if c.Type == schedulingv1beta1.PodGroupUnschedulableType && strings.Contains(c.Message, "Insufficient GPU memory on any one card") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %+v", pg.Status.Conditions)
	})
	var g corev1.Pod
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "g"}, &g); err != nil {
		t.Fatal(err)
	}
	if g.Spec.NodeName != "" {
		t.Errorf("g bound to %s, want it waiting", g.Spec.NodeName)
	}
}
