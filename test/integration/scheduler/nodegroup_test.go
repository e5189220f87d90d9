//go:build integration

package scheduler

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/nodegroup"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
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
	createNodes(t, specs)
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
	poll.Eventually(t, t.Context(), 60*time.Second, "pods bound in their groups", func() (bool, string) {
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
	poll.Eventually(t, t.Context(), 30*time.Second, "stranded waits naming the node groups", func() (bool, string) {
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

// TestNodeGroupsExample runs the documented example (docs/node-groups.md):
// the queues of examples/nodegroups/queues.yaml under the scheduler
// configuration examples/scheduler/nodegroup.conf, on two h100 nodes, one
// a100, one cpu and one without a group. lab-vision inherits lab's
// groups and fills the h100 nodes (preferred) first; lab-nlp's own
// affinity keeps it on a100; cpu-batch runs on cpu, spills
// onto a100 as a last resort and never onto h100; a queue without affinity
// keeps to the node without a group.
func TestNodeGroupsExample(t *testing.T) {
	const ns = "nodegroup-example"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	group := map[string]string{}
	var specs []controlplane.NodeSpec
	for i, g := range []string{"h100", "h100", "a100", "cpu", ""} {
		s := cpuNode(fmt.Sprintf("%s-%d", ns, i), "4")
		s.Labels = map[string]string{"test": ns}
		if g != "" {
			s.Labels[nodegroup.LabelKey] = g
		}
		group[s.Name] = g
		specs = append(specs, s)
	}
	createNodes(t, specs)
	raw, err := os.ReadFile("../../../examples/nodegroups/queues.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var q schedulingv1beta1.Queue
		if err := dec.Decode(&q); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		createQueue(t, &q)
	}
	stop, err := fw.StartSchedulerFile("../../../examples/scheduler/nodegroup.conf")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()

	gang := func(name, q string, pods int) {
		pg := &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       schedulingv1beta1.PodGroupSpec{MinMember: int32(pods), Queue: q},
		}
		if err := fw.Client.Create(t.Context(), pg); err != nil {
			t.Fatal(err)
		}
		for i := range pods {
			createPod(t, ns, fmt.Sprintf("%s-%d", name, i), map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: name}, podSpec(ns, "1"))
		}
	}
	// groups returns how many of the gang's pods are bound in each group.
	groups := func(gangName string, pods int) map[string]int {
		t.Helper()
		var got map[string]int
		poll.Eventually(t, t.Context(), 60*time.Second, gangName+" bound", func() (bool, string) {
			got = map[string]int{}
			bound := 0
			for _, p := range listPods(t, ns) {
				if p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] == gangName && p.Spec.NodeName != "" {
					got[group[p.Spec.NodeName]]++
					bound++
				}
			}
			var pg schedulingv1beta1.PodGroup
			_ = fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: gangName}, &pg)
			return bound == pods, fmt.Sprintf("%d of %d bound: %v; PodGroup %s %+v", bound, pods, got, pg.Status.Phase, pg.Status.Conditions)
		})
		return got
	}

	gang("vision", "lab-vision", 6)
	if got := groups("vision", 6); got["h100"] != 6 {
		t.Errorf("lab-vision in groups %v, want all 6 on h100 (preferred by lab)", got)
	}
	gang("nlp", "lab-nlp", 3)
	if got := groups("nlp", 3); got["a100"] != 3 {
		t.Errorf("lab-nlp in groups %v, want all 3 on a100 (its own affinity)", got)
	}
	gang("batch", "cpu-batch", 5)
	if got := groups("batch", 5); got["cpu"] != 4 || got["a100"] != 1 {
		t.Errorf("cpu-batch in groups %v, want 4 on cpu and the fifth on a100 (last resort), none on h100", got)
	}
	gang("other", "default", 1)
	if got := groups("other", 1); got[""] != 1 {
		t.Errorf("default queue in groups %v, want the node without a group", got)
	}
}
