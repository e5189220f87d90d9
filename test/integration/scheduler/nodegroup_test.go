//go:build integration

package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/nodegroup"
	"github.com/caldera-sh/caldera/test/integration/framework"
)

// nodeGroupConfig is the integration tests' configuration with the
// nodegroup plugin, not strict so that queues without affinity keep the
// nodes outside every group.
var nodeGroupConfig = strings.Replace(framework.SchedulerConfig,
	"  - name: binpack\n", "  - name: binpack\n  - name: nodegroup\n    args:\n      strict: false\n", 1)

// TestNodeGroups: queues whose spec.affinity names node groups get their
// pods onto those groups' nodes only, anti-affinity keeps pods off a
// group, a queue without affinity uses the ungrouped node, and a pod whose
// queue names a group no node is in waits with a reason naming the groups.
func TestNodeGroups(t *testing.T) {
	const ns = "nodegroup"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	group := map[string]string{}
	var specs []controlplane.NodeSpec
	for i, g := range []string{"train", "train", "serve", "serve", ""} {
		s := cpuNode(fmt.Sprintf("%s-%d", ns, i), "4")
		s.Labels = map[string]string{"test": ns}
		if g != "" {
			s.Labels[nodegroup.LabelKey] = g
		}
		group[s.Name] = g
		specs = append(specs, s)
	}
	if err := controlplane.CreateNodes(t.Context(), fw.Client, specs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range specs {
			_ = client.IgnoreNotFound(fw.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.Name}}))
		}
	})
	train := queue("ng-train", 1, nil)
	train.Spec.Affinity = &schedulingv1beta1.Affinity{NodeGroupAffinity: &schedulingv1beta1.NodeGroupAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []string{"train"},
	}}
	createQueue(t, train)
	notTrain := queue("ng-not-train", 1, nil)
	notTrain.Spec.Affinity = &schedulingv1beta1.Affinity{
		NodeGroupAffinity:     &schedulingv1beta1.NodeGroupAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []string{"train", "serve"}},
		NodeGroupAntiAffinity: &schedulingv1beta1.NodeGroupAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []string{"train"}},
	}
	createQueue(t, notTrain)
	nowhere := queue("ng-gpu", 1, nil)
	nowhere.Spec.Affinity = &schedulingv1beta1.Affinity{NodeGroupAffinity: &schedulingv1beta1.NodeGroupAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []string{"gpu"},
	}}
	createQueue(t, nowhere)

	stop, err := fw.StartScheduler(nodeGroupConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()

	gang := func(name, q string, pods int, cpu string) {
		pg := &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: q},
		}
		if err := fw.Client.Create(t.Context(), pg); err != nil {
			t.Fatal(err)
		}
		for i := range pods {
			createPod(t, ns, fmt.Sprintf("%s-%d", name, i), map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: name}, podSpec(ns, cpu))
		}
	}
	gang("trainer", "ng-train", 4, "1")
	gang("server", "ng-not-train", 2, "1")
	gang("other", "default", 1, "1")
	gang("stranded", "ng-gpu", 1, "1")

	want := map[string]string{"trainer": "train", "server": "serve", "other": ""}
	framework.Eventually(t, 60*time.Second, "pods bound in their groups", func() (bool, string) {
		pods := listPods(t, ns)
		for _, p := range pods {
			gname := p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]
			wg, ok := want[gname]
			if !ok {
				continue
			}
			if p.Spec.NodeName == "" {
				return false, describePods(pods)
			}
			if got := group[p.Spec.NodeName]; got != wg {
				t.Fatalf("%s (queue of %s) bound to %s in group %q, want group %q", p.Name, gname, p.Spec.NodeName, got, wg)
			}
		}
		return true, ""
	})

	var pg schedulingv1beta1.PodGroup
	framework.Eventually(t, 30*time.Second, "stranded waits naming the node groups", func() (bool, string) {
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "stranded"}, &pg); err != nil {
			return false, err.Error()
		}
		for _, c := range pg.Status.Conditions {
			if c.Type == schedulingv1beta1.PodGroupUnschedulableType &&
				strings.Contains(c.Message, `2 nodes in node group "serve", which queue "ng-gpu" does not name`) &&
				strings.Contains(c.Message, `1 node without a node group`) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", pg.Status.Conditions)
	})
}
