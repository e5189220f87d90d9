//go:build integration

package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

// treeTopology creates spines × leaves × nodes nodes of cpu CPUs,
// labelled test=<ns>, with their HyperNodes <prefix>leaf-<s>-<l> (tier 1,
// tierName leaf), <prefix>spine-<s> (tier 2, spine) and, when top is set,
// one HyperNode of that name over the spines (tier 3, core). Node
// <ns>-<s>-<l>-<n> is under leaf <s>-<l>. It returns the leaf of each node.
func treeTopology(t *testing.T, ns, prefix string, spines, leaves, nodes int, cpu, top string) map[string]string {
	t.Helper()
	leafOf := map[string]string{}
	var specs []controlplane.NodeSpec
	var hns []*topologyv1alpha1.HyperNode
	core := hyperNode(top, 3, "core")
	for s := range spines {
		spine := hyperNode(fmt.Sprintf("%sspine-%d", prefix, s), 2, "spine")
		for l := range leaves {
			leaf := hyperNode(fmt.Sprintf("%sleaf-%d-%d", prefix, s, l), 1, "leaf")
			for n := range nodes {
				name := fmt.Sprintf("%s-%d-%d-%d", ns, s, l, n)
				spec := cpuNode(name, cpu)
				spec.Labels = map[string]string{"test": ns}
				specs = append(specs, spec)
				leafOf[name] = leaf.Name
				leaf.Spec.Members = append(leaf.Spec.Members, member(topologyv1alpha1.MemberTypeNode, name))
			}
			hns = append(hns, leaf)
			spine.Spec.Members = append(spine.Spec.Members, member(topologyv1alpha1.MemberTypeHyperNode, leaf.Name))
		}
		hns = append(hns, spine)
		core.Spec.Members = append(core.Spec.Members, member(topologyv1alpha1.MemberTypeHyperNode, spine.Name))
	}
	if top != "" {
		hns = append(hns, core)
	}
	createNodes(t, specs)
	createHyperNodes(t, hns)
	return leafOf
}

// smallTopology is treeTopology with HyperNodes named after the test's
// namespace and no top.
func smallTopology(t *testing.T, ns string, spines, leaves, nodes int, cpu string) map[string]string {
	t.Helper()
	return treeTopology(t, ns, ns+"-", spines, leaves, nodes, cpu, "")
}

// bindSmallPods creates a bound 1-CPU pod on each node.
func bindSmallPods(t *testing.T, ns string, nodes ...string) {
	t.Helper()
	for _, node := range nodes {
		spec := podSpec(ns, "1")
		spec.NodeName = node
		createPod(t, ns, "small-"+node, nil, spec)
	}
}

func startTopologyScheduler(t *testing.T) {
	t.Helper()
	stop, err := fw.StartScheduler(topologyConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
}

// TestLeafBoundExample runs examples/batch/leaf-bound-training.yaml
// (docs/network-topology.md): eight 8-CPU workers under one leaf. On two
// leaves of nine 8-CPU nodes, one of them with a small pod on a node, the
// job takes the fuller leaf, which still holds it, and leaves the empty
// leaf whole.
func TestLeafBoundExample(t *testing.T) {
	const ns = "leaf-bound"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	leafOf := smallTopology(t, ns, 1, 2, 9, "8")
	bindSmallPods(t, ns, ns+"-0-1-0")
	startTopologyScheduler(t)
	createExampleJob(t, ns, "../../../examples/batch/leaf-bound-training.yaml")

	var leaves map[string]int
	poll.Eventually(t, t.Context(), 60*time.Second, "the 8 workers bound", func() (bool, string) {
		leaves = map[string]int{}
		bound := 0
		for _, p := range listPods(t, ns) {
			if p.Labels[batchv1alpha1.JobNameKey] != "" && p.Spec.NodeName != "" {
				leaves[leafOf[p.Spec.NodeName]]++
				bound++
			}
		}
		return bound == 8, fmt.Sprintf("%d of 8 bound: %v", bound, leaves)
	})
	if leaves[ns+"-leaf-0-1"] != 8 {
		t.Errorf("workers per leaf %v, want all 8 in the fuller leaf-0-1", leaves)
	}
}

// TestPartitionsExample runs the documented example
// examples/batch/network-topology-partitions.yaml (docs/network-topology.md):
// eight 4-CPU workers in four partitions of two, the job within one spine,
// each partition within one leaf, three partitions needed to start.
//
// On 2 spines × 4 leaves × 2 nodes of 4 CPUs, with a small pod on one node
// of each of two leaves of spine-0, spine-0 has room for six workers but
// only two whole partitions: placed pod by pod the job would start there
// with partitions split across leaves. It starts in spine-1 instead, every
// partition in a leaf of its own.
func TestPartitionsExample(t *testing.T) {
	const ns = "partitions"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	leafOf := smallTopology(t, ns, 2, 4, 2, "4")
	bindSmallPods(t, ns, ns+"-0-0-0", ns+"-0-1-0")
	startTopologyScheduler(t)
	_, pg := createExampleJob(t, ns, "../../../examples/batch/network-topology-partitions.yaml")

	partitionLeaves := map[string]map[string]bool{}
	poll.Eventually(t, t.Context(), 60*time.Second, "the 8 workers bound", func() (bool, string) {
		partitionLeaves = map[string]map[string]bool{}
		bound := 0
		for _, p := range listPods(t, ns) {
			part, ok := p.Labels[batchv1alpha1.TaskPartitionID]
			if !ok || p.Spec.NodeName == "" {
				continue
			}
			bound++
			if partitionLeaves[part] == nil {
				partitionLeaves[part] = map[string]bool{}
			}
			partitionLeaves[part][leafOf[p.Spec.NodeName]] = true
		}
		var cur schedulingv1beta1.PodGroup
		_ = fw.Client.Get(t.Context(), client.ObjectKeyFromObject(pg), &cur)
		return bound == 8, fmt.Sprintf("%d of 8 bound, partitions in leaves %v; PodGroup %s %+v", bound, partitionLeaves, cur.Status.Phase, cur.Status.Conditions)
	})
	used := map[string]bool{}
	for part, leaves := range partitionLeaves {
		if len(leaves) != 1 {
			t.Errorf("partition %s spans leaves %v", part, leaves)
		}
		for l := range leaves {
			if used[l] {
				t.Errorf("leaf %s holds two partitions", l)
			}
			used[l] = true
			if !strings.HasPrefix(l, ns+"-leaf-1-") {
				t.Errorf("partition %s in %s, want spine-1", part, l)
			}
		}
	}
}
