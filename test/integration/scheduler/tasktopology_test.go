//go:build integration

package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestTaskTopologyExample runs the documented example
// (docs/task-topology.md): the Job examples/batch/tensorflow-task-topology.yaml
// under the scheduler configuration examples/scheduler/task-topology.conf,
// on four 4-CPU nodes. Each parameter server lands on its own node with
// two workers beside it.
func TestTaskTopologyExample(t *testing.T) {
	const ns = "task-topology-example"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	var specs []controlplane.NodeSpec
	for i := range 4 {
		s := cpuNode(fmt.Sprintf("%s-%d", ns, i), "4")
		s.Labels = map[string]string{"test": ns}
		specs = append(specs, s)
	}
	createNodes(t, specs)
	stop, err := fw.StartSchedulerFile("../../../examples/scheduler/task-topology.conf")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()

	createExampleJob(t, ns, "../../../examples/batch/tensorflow-task-topology.yaml")

	var together [][]string
	poll.Eventually(t, t.Context(), 60*time.Second, "the job's 6 pods bound", func() (bool, string) {
		perNode := map[string][]string{}
		bound := 0
		for _, p := range listPods(t, ns) {
			if p.Spec.NodeName != "" {
				perNode[p.Spec.NodeName] = append(perNode[p.Spec.NodeName], p.Name)
				bound++
			}
		}
		together = nil
		for _, pods := range perNode {
			slices.Sort(pods)
			together = append(together, pods)
		}
		slices.SortFunc(together, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
		return bound == 6, fmt.Sprintf("%d of 6 bound: %v", bound, together)
	})
	// Which workers join which parameter server is the buckets' choice
	// (docs/task-topology.md): the lighter bucket of equals, in turn.
	want := [][]string{
		{"tf-topology-ps-0", "tf-topology-worker-0", "tf-topology-worker-2"},
		{"tf-topology-ps-1", "tf-topology-worker-1", "tf-topology-worker-3"},
	}
	if fmt.Sprint(together) != fmt.Sprint(want) {
		t.Errorf("pods sharing nodes %v, want %v", together, want)
	}
}
