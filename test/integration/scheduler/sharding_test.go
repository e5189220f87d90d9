//go:build integration

package scheduler

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	shardv1alpha1 "github.com/caldera-sh/caldera/apis/shard/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

const nodeShardsExample = "../../../examples/sharding/nodeshards.yaml"

// createNodeShards creates the NodeShards of a multi-document file,
// deleted when the test ends.
func createNodeShards(t *testing.T, path string) []*shardv1alpha1.NodeShard {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*shardv1alpha1.NodeShard
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var s shardv1alpha1.NodeShard
		if err := yaml.UnmarshalStrict([]byte(doc), &s); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := fw.Client.Create(t.Context(), &s); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = client.IgnoreNotFound(fw.Client.Delete(context.Background(), s.DeepCopy())) })
		out = append(out, &s)
	}
	return out
}

// runShardedScheduler runs an instance serving schedulerName name in hard
// sharding mode, reading the NodeShard of the same name.
func runShardedScheduler(t *testing.T, name string) {
	t.Helper()
	stop, err := fw.StartScheduler(framework.SchedulerConfig + "schedulerNames: [" + name + "]\nsharding:\n  mode: hard\n")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
}

// waitShardStatus waits until the NodeShard's status, computed from its
// current spec, lists exactly inUse in use and nothing waiting.
func waitShardStatus(t *testing.T, name string, inUse ...string) {
	t.Helper()
	poll.Eventually(t, t.Context(), time.Minute, fmt.Sprintf("NodeShard %s in use %v", name, inUse), func() (bool, string) {
		var s shardv1alpha1.NodeShard
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: name}, &s); err != nil {
			return false, err.Error()
		}
		st := s.Status
		ok := st.ObservedGeneration == s.Generation && slices.Equal(st.NodesInUse, inUse) &&
			len(st.NodesToAdd) == 0 && len(st.NodesToRemove) == 0 && st.InUse == int32(len(inUse)) && st.LastUpdateTime != nil
		return ok, fmt.Sprintf("generation %d, status %+v", s.Generation, st)
	})
}

// TestNodeShardsExample runs the documented example (docs/scheduler.md):
// two instances, each with the NodeShard of examples/sharding/nodeshards.yaml,
// place their pods only on their own nodes and report them in use. A
// node moved from one shard to the other is released by the first and
// then used by the second, and no node holds more than it has.
func TestNodeShardsExample(t *testing.T) {
	const ns = "node-shards"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	var specs []controlplane.NodeSpec
	for _, name := range []string{"batch-node-1", "batch-node-2", "agent-node-1", "agent-node-2"} {
		s := cpuNode(name, "4")
		s.Labels = map[string]string{"test": ns}
		specs = append(specs, s)
	}
	createNodes(t, specs)
	createNodeShards(t, nodeShardsExample)
	runShardedScheduler(t, "batch")
	runShardedScheduler(t, "agents")
	waitShardStatus(t, "batch", "batch-node-1", "batch-node-2")
	waitShardStatus(t, "agents", "agent-node-1", "agent-node-2")

	seq := 0
	create := func(scheduler string, n int, cpu string) {
		for range n {
			spec := podSpec(ns, cpu)
			spec.SchedulerName = scheduler
			createPod(t, ns, fmt.Sprintf("%s-%d", scheduler, seq), nil, spec)
			seq++
		}
	}
	// Four 1-CPU pods each: they fit the instance's own two nodes.
	create("batch", 4, "1")
	create("agents", 4, "1")
	pods := waitAllBound(t, ns, 8)
	for _, p := range pods {
		want := strings.TrimSuffix(p.Spec.SchedulerName, "s") + "-node-"
		if !strings.HasPrefix(p.Spec.NodeName, want) {
			t.Errorf("%s (scheduler %s) is on %s, outside its shard", p.Name, p.Spec.SchedulerName, p.Spec.NodeName)
		}
	}

	// Move batch-node-2 to the agents' shard.
	setDesired := func(name string, nodes ...string) {
		var s shardv1alpha1.NodeShard
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: name}, &s); err != nil {
			t.Fatal(err)
		}
		s.Spec.NodesDesired = nodes
		if err := fw.Client.Update(t.Context(), &s); err != nil {
			t.Fatal(err)
		}
	}
	setDesired("agents", "agent-node-1", "agent-node-2", "batch-node-2")
	setDesired("batch", "batch-node-1")
	waitShardStatus(t, "batch", "batch-node-1")
	waitShardStatus(t, "agents", "agent-node-1", "agent-node-2", "batch-node-2")

	// The agents fill what is left of their three nodes; a batch pod
	// asking for more than batch-node-1 has free waits, told that the
	// other nodes are outside its shard.
	x := 0 // CPUs the batch pods hold on batch-node-2
	for _, p := range pods {
		if p.Spec.NodeName == "batch-node-2" {
			x++
		}
	}
	create("agents", 8-x, "1")
	waitAllBound(t, ns, 16-x)
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "batch-wide"},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "default"},
	}
	if err := fw.Client.Create(t.Context(), pg); err != nil {
		t.Fatal(err)
	}
	spec := podSpec(ns, fmt.Sprint(x+1))
	spec.SchedulerName = "batch"
	createPod(t, ns, "batch-wide", map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: "batch-wide"}, spec)
	waitUnschedulable(t, pg, "batch-wide unschedulable", "nodes outside this scheduler's NodeShard")

	var all corev1.PodList
	if err := fw.Client.List(t.Context(), &all, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	used := map[string]resource.Quantity{}
	for _, p := range all.Items {
		if p.Spec.NodeName == "" {
			if p.Spec.SchedulerName != "batch" {
				t.Errorf("%s is not bound", p.Name)
			}
			continue
		}
		q := used[p.Spec.NodeName]
		q.Add(p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU])
		used[p.Spec.NodeName] = q
		if p.Spec.SchedulerName == "agents" && p.Spec.NodeName == "batch-node-1" {
			t.Errorf("%s (agents) is on batch-node-1, outside its shard", p.Name)
		}
	}
	for node, q := range used {
		if q.Cmp(resource.MustParse("4")) > 0 {
			t.Errorf("node %s holds %s CPUs of 4", node, q.String())
		}
	}
}

// TestSoftShard: an instance in soft mode places pods on its shard's
// nodes while they have room, and on other nodes only when none of its
// own fits.
func TestSoftShard(t *testing.T) {
	const ns = "soft-shard"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	var specs []controlplane.NodeSpec
	for _, name := range []string{"soft-own", "soft-other"} {
		s := cpuNode(name, "2")
		s.Labels = map[string]string{"test": ns}
		specs = append(specs, s)
	}
	createNodes(t, specs)
	shard := &shardv1alpha1.NodeShard{ObjectMeta: metav1.ObjectMeta{Name: "soft"}, Spec: shardv1alpha1.NodeShardSpec{NodesDesired: []string{"soft-own"}}}
	if err := fw.Client.Create(t.Context(), shard); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.IgnoreNotFound(fw.Client.Delete(context.Background(), shard)) })
	stop, err := fw.StartScheduler(framework.SchedulerConfig + "schedulerNames: [soft]\nsharding:\n  mode: soft\n")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	waitShardStatus(t, "soft", "soft-own")
	for i := range 3 {
		spec := podSpec(ns, "1")
		spec.SchedulerName = "soft"
		createPod(t, ns, fmt.Sprintf("p%d", i), nil, spec)
		pods := waitAllBound(t, ns, i+1)
		want := "soft-own"
		if i == 2 {
			want = "soft-other" // soft-own is full
		}
		for _, p := range pods {
			if p.Name == fmt.Sprintf("p%d", i) && p.Spec.NodeName != want {
				t.Errorf("%s is on %s, want %s", p.Name, p.Spec.NodeName, want)
			}
		}
	}
}
