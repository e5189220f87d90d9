//go:build integration

package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

const numaAwareConf = "../../../examples/scheduler/numa-aware.conf"

// numaReport is what a node agent reports of a 16-CPU node of two NUMA
// nodes (CPUs 0-7 and 8-15, two hyperthreads per core) whose kubelet pins
// CPUs with the single-numa-node policy, free CPUs free.
func numaReport(node, free string) *nodeinfov1alpha1.Numatopology {
	detail := map[string]nodeinfov1alpha1.CPUInfo{}
	for id := range 16 {
		detail[fmt.Sprint(id)] = nodeinfov1alpha1.CPUInfo{NUMANodeID: id / 8, SocketID: id / 8, CoreID: id / 2}
	}
	return &nodeinfov1alpha1.Numatopology{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: nodeinfov1alpha1.NumatopoSpec{
		Policies: map[nodeinfov1alpha1.PolicyName]string{
			nodeinfov1alpha1.CPUManagerPolicy: "static", nodeinfov1alpha1.TopologyManagerPolicy: "single-numa-node"},
		NumaResMap: map[string]nodeinfov1alpha1.ResourceInfo{"cpu": {Allocatable: free, Capacity: 16}},
		CPUDetail:  detail,
	}}
}

// TestNUMAAwareExample runs the documented example (docs/numa-aware.md):
// examples/batch/numa-inference.yaml under examples/scheduler/
// numa-aware.conf on two 16-CPU nodes of two NUMA nodes. The first node
// has 8 CPUs free, 4 on each NUMA node; the second has all 16. Both
// 6-CPU servers go to the second node, one per NUMA node. A second copy of
// the job then fits nowhere (the second node is short of CPUs, the first
// of a NUMA node with 6 free: the reason says so), until the first node's
// agent reports its CPUs free.
func TestNUMAAwareExample(t *testing.T) {
	const ns = "numa-example"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	split, whole := ns+"-0", ns+"-1"
	var specs []controlplane.NodeSpec
	for _, name := range []string{split, whole} {
		s := cpuNode(name, "16")
		s.Labels = map[string]string{"test": ns}
		specs = append(specs, s)
	}
	createNodes(t, specs)
	for _, r := range []*nodeinfov1alpha1.Numatopology{numaReport(split, "4-11"), numaReport(whole, "0-15")} {
		if err := fw.Client.Create(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fw.Client.Delete(t.Context(), r) })
	}
	runSchedulerFile(t, numaAwareConf)

	bound := func(job string) (bool, string) {
		var nodes []string
		pods := listPods(t, ns)
		for _, p := range pods {
			if strings.HasPrefix(p.Name, job+"-") {
				nodes = append(nodes, p.Spec.NodeName)
			}
		}
		return len(nodes) == 2 && nodes[0] != "" && nodes[1] != "", describePods(pods)
	}
	createExampleJob(t, ns, "../../../examples/batch/numa-inference.yaml")
	poll.Eventually(t, t.Context(), 60*time.Second, "both servers bound", func() (bool, string) { return bound("numa-inference") })
	for _, p := range listPods(t, ns) {
		if p.Spec.NodeName != whole {
			t.Errorf("%s on %q, want %s: the other node has no NUMA node with 6 free CPUs", p.Name, p.Spec.NodeName, whole)
		}
	}

	_, pg := createExampleJobNamed(t, ns, "../../../examples/batch/numa-inference.yaml", "numa-inference-2")
	waitUnschedulable(t, pg, "the second job waits for a NUMA placement", "1 node has no single-numa-node placement for container 0's 6 CPUs")

	// The first node's pods are gone: its agent reports every CPU free.
	var r nodeinfov1alpha1.Numatopology
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: split}, &r); err != nil {
		t.Fatal(err)
	}
	r.Spec.NumaResMap["cpu"] = nodeinfov1alpha1.ResourceInfo{Allocatable: "0-15", Capacity: 16}
	if err := fw.Client.Update(t.Context(), &r); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 60*time.Second, "the second job bound once the node reports room", func() (bool, string) { return bound("numa-inference-2") })
	for _, p := range listPods(t, ns) {
		if strings.HasPrefix(p.Name, "numa-inference-2-") && p.Spec.NodeName != split {
			t.Errorf("%s on %q, want %s", p.Name, p.Spec.NodeName, split)
		}
	}
}
