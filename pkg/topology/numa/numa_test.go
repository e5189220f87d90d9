package numa

import (
	"strings"
	"testing"

	"k8s.io/utils/cpuset"
)

// twoSockets is a node of two NUMA nodes, one socket each, four cores of
// two hyperthreads per socket: CPUs 2k and 2k+1 share a core; 0-7 are
// NUMA node 0, 8-15 NUMA node 1.
func twoSockets() map[int]CPU {
	cpus := map[int]CPU{}
	for id := range 16 {
		cpus[id] = CPU{NUMA: id / 8, Socket: id / 8, Core: id / 2}
	}
	return cpus
}

func set(t *testing.T, s string) cpuset.CPUSet {
	t.Helper()
	c, err := cpuset.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAdmit(t *testing.T) {
	for _, tc := range []struct {
		name string
		// free is the node's free CPUs ("0-15" when empty); reserved its
		// reserved count.
		free     string
		reserved int
		// cpuManager is "static" when empty; nodePolicy the node's
		// topology policy.
		cpuManager string
		nodePolicy Policy
		podPolicy  Policy
		containers []int64
		// want is the CPUs given ("" for none); reason a part of the
		// refusal, empty when admitted.
		want      string
		numaNodes int
		reason    string
	}{
		{name: "single-numa-node fits on the first NUMA node",
			nodePolicy: SingleNUMANode, podPolicy: SingleNUMANode, containers: []int64{4}, want: "0-3", numaNodes: 1},
		{name: "single-numa-node refuses more than a NUMA node holds",
			nodePolicy: SingleNUMANode, podPolicy: SingleNUMANode, containers: []int64{10}, reason: "has no single-numa-node placement for container 0's 10 CPUs"},
		{name: "restricted spans two NUMA nodes when no one could hold it",
			nodePolicy: Restricted, podPolicy: Restricted, containers: []int64{10}, want: "0-9", numaNodes: 2},
		{name: "single-numa-node moves to the NUMA node with room",
			free: "0-3,8-15", nodePolicy: SingleNUMANode, podPolicy: SingleNUMANode, containers: []int64{6}, want: "8-13", numaNodes: 1},
		{name: "restricted refuses a split one NUMA node could have held",
			free: "0-3,10-13", nodePolicy: Restricted, podPolicy: Restricted, containers: []int64{6}, reason: "has no restricted placement"},
		{name: "best-effort admits the split",
			free: "0-3,10-13", nodePolicy: BestEffort, podPolicy: BestEffort, containers: []int64{6}, want: "0-3,10-11", numaNodes: 2},
		{name: "the pod's policy must be the node's",
			nodePolicy: Restricted, podPolicy: SingleNUMANode, containers: []int64{2}, reason: `has topology manager policy "restricted", not the pod's "single-numa-node"`},
		{name: "a pod with a policy needs a static CPU manager",
			cpuManager: "none", nodePolicy: SingleNUMANode, podPolicy: SingleNUMANode, containers: []int64{2}, reason: `has CPU manager policy "none", not static`},
		{name: "a pod without a policy passes a node that aligns nothing",
			cpuManager: "none", containers: []int64{20}},
		{name: "a pod without a policy passes a node with topology policy none",
			nodePolicy: None, containers: []int64{20}},
		{name: "a pod without a policy is held to the node's policy",
			nodePolicy: SingleNUMANode, containers: []int64{10}, reason: "has no single-numa-node placement"},
		{name: "a pod with policy none is held to the node's policy too",
			nodePolicy: SingleNUMANode, podPolicy: None, containers: []int64{3}, want: "0-2", numaNodes: 1},
		{name: "reserved CPUs are taken first and never given",
			reserved: 2, nodePolicy: SingleNUMANode, podPolicy: SingleNUMANode, containers: []int64{7}, want: "8-14", numaNodes: 1},
		{name: "a later container sees the earlier one's CPUs gone",
			nodePolicy: SingleNUMANode, podPolicy: SingleNUMANode, containers: []int64{6, 4}, want: "0-5,8-11", numaNodes: 2},
		{name: "containers without whole CPUs are not pinned",
			nodePolicy: SingleNUMANode, podPolicy: SingleNUMANode, containers: []int64{0, 2, 0}, want: "0-1", numaNodes: 1},
		{name: "whole cores before the lone CPU of a busy core",
			free: "1-7", nodePolicy: SingleNUMANode, podPolicy: SingleNUMANode, containers: []int64{2}, want: "2-3", numaNodes: 1},
		{name: "more CPUs than are free",
			free: "0-3", nodePolicy: BestEffort, podPolicy: BestEffort, containers: []int64{5}, reason: "has 4 free CPUs for container 0's 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &Node{CPUs: twoSockets(), Free: set(t, "0-15"), Reserved: tc.reserved,
				CPUManagerPolicy: StaticCPUManager, TopologyManagerPolicy: tc.nodePolicy}
			if tc.free != "" {
				n.Free = set(t, tc.free)
			}
			if tc.cpuManager != "" {
				n.CPUManagerPolicy = tc.cpuManager
			}
			got, reason := Admit(n, tc.podPolicy, tc.containers)
			if tc.reason != "" {
				if !strings.Contains(reason, tc.reason) || !got.CPUs.IsEmpty() {
					t.Fatalf("Admit = %v, %q; want refused with %q", got.CPUs, reason, tc.reason)
				}
				return
			}
			if reason != "" {
				t.Fatalf("refused: %s", reason)
			}
			want := cpuset.New()
			if tc.want != "" {
				want = set(t, tc.want)
			}
			if !got.CPUs.Equals(want) || got.NUMANodes != tc.numaNodes {
				t.Errorf("CPUs %v over %d NUMA nodes, want %v over %d", got.CPUs, got.NUMANodes, want, tc.numaNodes)
			}
		})
	}
}

func TestScore(t *testing.T) {
	for _, tc := range []struct {
		n, most int
		want    int64
	}{{1, 4, 75}, {2, 4, 50}, {4, 4, 0}, {0, 0, 100}, {1, 1, 0}} {
		if got := Score(tc.n, tc.most); got != tc.want {
			t.Errorf("Score(%d, %d) = %d, want %d", tc.n, tc.most, got, tc.want)
		}
	}
}

func TestPolicyValid(t *testing.T) {
	for _, p := range []Policy{None, BestEffort, Restricted, SingleNUMANode} {
		if !p.Valid() {
			t.Errorf("%q not valid", p)
		}
	}
	if Policy("single-numa").Valid() {
		t.Error(`"single-numa" valid`)
	}
}
