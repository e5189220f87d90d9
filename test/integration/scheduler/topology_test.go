//go:build integration

package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

// topologyConfig is the integration tests' configuration with the
// network-topology-aware plugin.
var topologyConfig = strings.Replace(framework.SchedulerConfig,
	"  - name: binpack\n", "  - name: binpack\n  - name: network-topology-aware\n", 1)

// topoCluster creates 4 spines of 4 leaves of 8 nodes of 4 CPUs each, with
// their HyperNodes: leaf-<s>-<l> (tier 1, tierName leaf), spine-<s> (tier
// 2, spine) and one top (tier 3, core). It returns the leaf of each node.
func topoCluster(t *testing.T, ns string) map[string]string {
	t.Helper()
	return treeTopology(t, ns, "", 4, 4, 8, "4", "top")
}

func hyperNode(name string, tier int32, tierName string) *topologyv1alpha1.HyperNode {
	return &topologyv1alpha1.HyperNode{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       topologyv1alpha1.HyperNodeSpec{Tier: tier, TierName: tierName},
	}
}

func member(t topologyv1alpha1.MemberType, name string) topologyv1alpha1.MemberSpec {
	return topologyv1alpha1.MemberSpec{Type: t, Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: name}}}
}

// createTopologyGang creates a gang of 1-CPU pods that needs all of them,
// with a network topology constraint.
func createTopologyGang(t *testing.T, ns, name string, pods int, nt *schedulingv1beta1.NetworkTopologySpec) {
	t.Helper()
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: int32(pods), Queue: "default", NetworkTopology: nt},
	}
	if err := fw.Client.Create(t.Context(), pg); err != nil {
		t.Fatal(err)
	}
	for i := range pods {
		createPod(t, ns, fmt.Sprintf("%s-%02d", name, i), map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: name}, podSpec(ns, "1"))
	}
}

// TestGangsKeepToOneLeaf, on 4 spines × 4 leaves × 8 nodes: hard tier-1
// gangs each land under one leaf, packed into a used leaf before an empty
// one is opened, so a 32-pod gang still finds a whole leaf; a gang larger
// than a leaf waits with a topology reason; a soft gang larger than a leaf
// spills into one spine.
func TestGangsKeepToOneLeaf(t *testing.T) {
	const ns = "topo"
	createNamespace(t, ns)
	createQueue(t, queue("default", 1, nil))
	leafOf := topoCluster(t, ns)
	stop, err := fw.StartScheduler(topologyConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	tier := func(n int32) *schedulingv1beta1.NetworkTopologySpec {
		return &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: &n}
	}
	// leaves returns the leaves each gang's bound pods are on, and how
	// many of its pods are bound.
	leaves := func(gang string) ([]string, int) {
		var out []string
		bound := 0
		for _, p := range listPods(t, ns) {
			if p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] != gang || p.Spec.NodeName == "" {
				continue
			}
			bound++
			out = append(out, leafOf[p.Spec.NodeName])
		}
		slices.Sort(out)
		return slices.Compact(out), bound
	}
	placed := func(gang string, pods int) []string {
		t.Helper()
		var got []string
		poll.Eventually(t, t.Context(), 60*time.Second, gang+" bound", func() (bool, string) {
			l, bound := leaves(gang)
			got = l
			return bound == pods, fmt.Sprintf("%d of %d bound, leaves %v", bound, pods, l)
		})
		return got
	}

	createTopologyGang(t, ns, "first", 16, tier(1))
	first := placed("first", 16)
	if len(first) != 1 {
		t.Fatalf("first spans leaves %v, want one", first)
	}
	// The second 16-pod gang fills first's leaf rather than opening one.
	createTopologyGang(t, ns, "second", 16, tier(1))
	if second := placed("second", 16); !slices.Equal(second, first) {
		t.Errorf("second landed in %v, want %v (the used leaf)", second, first)
	}
	createTopologyGang(t, ns, "whole", 32, tier(1))
	whole := placed("whole", 32)
	if len(whole) != 1 || whole[0] == first[0] {
		t.Errorf("whole landed in %v, want one empty leaf", whole)
	}

	createTopologyGang(t, ns, "too-big", 33, tier(1))
	var pg schedulingv1beta1.PodGroup
	poll.Eventually(t, t.Context(), 30*time.Second, "too-big waits with a topology reason", func() (bool, string) {
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "too-big"}, &pg); err != nil {
			return false, err.Error()
		}
		for _, c := range pg.Status.Conditions {
			if c.Type == schedulingv1beta1.PodGroupUnschedulableType && c.Reason == "TopologyConstraint" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", pg.Status.Conditions)
	})
	if _, bound := leaves("too-big"); bound != 0 {
		t.Errorf("%d pods of too-big bound, want none", bound)
	}

	createTopologyGang(t, ns, "spill", 40, &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.SoftNetworkTopologyMode})
	spill := placed("spill", 40)
	spines := map[string]bool{}
	for _, l := range spill {
		spines[strings.Join(strings.Split(l, "-")[:2], "-")] = true
	}
	if len(spill) < 2 || len(spines) != 1 {
		t.Errorf("spill landed in leaves %v, want two or more leaves of one spine", spill)
	}
}
