// Package numa decides whether a pod's CPUs can be placed on a node the way
// the node's kubelet will place them, with a CPU manager pinning whole CPUs
// and a topology manager aligning them with NUMA nodes, and which CPUs it
// would get. It is pure: a node's topology and free CPUs in, a verdict and
// an assignment out.
//
// The rules are the kubelet's as its topology manager documents them, with
// the CPU manager as the only hint provider: a container asking for a whole
// number of CPUs gets one hint per set of NUMA nodes whose free CPUs can
// hold it, preferred when the set is as small as any set of the node's
// NUMA nodes that could hold it at all; single-numa-node admits a preferred
// hint of one NUMA node, restricted a preferred hint, best-effort and none
// anything.
package numa

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"

	"k8s.io/utils/cpuset"
)

// Policy is a topology manager policy, the pod's (its
// volcano.sh/numa-topology-policy annotation) or the node's.
type Policy string

// The topology manager policies.
const (
	None           Policy = "none"
	BestEffort     Policy = "best-effort"
	Restricted     Policy = "restricted"
	SingleNUMANode Policy = "single-numa-node"
)

// Valid says whether p is one of the policies.
func (p Policy) Valid() bool {
	switch p {
	case None, BestEffort, Restricted, SingleNUMANode:
		return true
	}
	return false
}

// StaticCPUManager is the CPU manager policy that pins whole CPUs; NUMA
// alignment needs it.
const StaticCPUManager = "static"

// CPU is where one logical CPU sits.
type CPU struct {
	NUMA, Socket, Core int
}

// Node is what a node's kubelet would place a pod's CPUs with.
type Node struct {
	// CPUs is every logical CPU of the node by id.
	CPUs map[int]CPU
	// Free is the CPUs no pinned container holds.
	Free cpuset.CPUSet
	// Reserved is how many CPUs the kubelet keeps for the system: they are
	// taken from the free CPUs first, by topology, and never given.
	Reserved int
	// CPUManagerPolicy and TopologyManagerPolicy are the kubelet's.
	CPUManagerPolicy      string
	TopologyManagerPolicy Policy

	// topo indexes CPUs, made on first use; CPUs must not change after.
	topo *topology
}

// Assignment is the CPUs a pod would get on a node, and how many NUMA
// nodes they span.
type Assignment struct {
	CPUs      cpuset.CPUSet
	NUMANodes int
}

// Admit says whether a pod whose containers ask for the given CPUs (whole
// CPUs; 0 for a container with no whole-CPU request, which the CPU manager
// does not pin) and whose policy is policy would be admitted on n, and
// with which CPUs. An empty policy means the pod has none. When the pod is
// refused, the reason says why, as a phrase about the node ("has ..."),
// and the assignment is empty.
//
// A pod with a policy other than none is refused on a node without a
// static CPU manager or with another topology policy. A pod with none, or
// no policy, is held to the node's topology policy when the node has one
// and a static CPU manager, as the kubelet holds every Guaranteed pod.
func Admit(n *Node, policy Policy, containers []int64) (Assignment, string) {
	if reason := n.Refuses(policy); reason != "" {
		return refuse(reason)
	}
	if !n.aligns(policy) {
		return Assignment{CPUs: cpuset.New()}, ""
	}
	t := n.topology()
	available := n.Free.Difference(t.take(n.Free, n.Reserved, 0))
	given := cpuset.New()
	for i, want := range containers {
		if want <= 0 {
			continue
		}
		if int64(available.Size()) < want {
			return refuse(fmt.Sprintf("has %d free CPUs for container %d's %d", available.Size(), i, want))
		}
		hint, ok := t.bestHint(available, int(want), n.TopologyManagerPolicy)
		if !ok {
			return refuse(fmt.Sprintf("has no %s placement for container %d's %d CPUs", n.TopologyManagerPolicy, i, want))
		}
		cpus := t.take(available, int(want), hint)
		available = available.Difference(cpus)
		given = given.Union(cpus)
	}
	return Assignment{CPUs: given, NUMANodes: t.numaNodes(given)}, ""
}

// Refuses says why a pod whose policy is policy can never be admitted on n
// whatever its CPUs (its policy is not the node's, or the node pins no
// CPUs), or "" when it may be. An empty policy, or none, is refused
// nowhere.
func (n *Node) Refuses(policy Policy) string {
	if policy == "" || policy == None {
		return ""
	}
	if n.CPUManagerPolicy != StaticCPUManager {
		return fmt.Sprintf("has CPU manager policy %q, not static", n.CPUManagerPolicy)
	}
	if n.TopologyManagerPolicy != policy {
		return fmt.Sprintf("has topology manager policy %q, not the pod's %q", n.TopologyManagerPolicy, policy)
	}
	return ""
}

// aligns says whether the node's kubelet aligns the CPUs of a pod with
// this policy: it pins CPUs and applies a topology policy.
func (n *Node) aligns(policy Policy) bool {
	if policy != "" && policy != None {
		return true
	}
	return n.CPUManagerPolicy == StaticCPUManager && n.TopologyManagerPolicy != "" && n.TopologyManagerPolicy != None
}

// WithFree returns a copy of n whose free CPUs are free; it shares n's
// topology.
func (n *Node) WithFree(free cpuset.CPUSet) *Node {
	c := *n
	c.Free = free
	return &c
}

func (n *Node) topology() *topology {
	if n.topo == nil {
		n.topo = newTopology(n.CPUs)
	}
	return n.topo
}

// refuse is a refusal for reason.
func refuse(reason string) (Assignment, string) { return Assignment{CPUs: cpuset.New()}, reason }

// topology indexes a node's CPUs by NUMA node and by physical core.
type topology struct {
	cpus map[int]CPU
	// numa lists the NUMA node ids in order; bit i of a mask is numa[i].
	numa []int
	// all is every CPU of each NUMA node, by bit.
	all []cpuset.CPUSet
}

func newTopology(cpus map[int]CPU) *topology {
	t := &topology{cpus: cpus}
	ids := map[int]bool{}
	for _, c := range cpus {
		ids[c.NUMA] = true
	}
	for id := range ids {
		t.numa = append(t.numa, id)
	}
	slices.Sort(t.numa)
	t.all = make([]cpuset.CPUSet, len(t.numa))
	for i, id := range t.numa {
		var in []int
		for cpu, c := range cpus {
			if c.NUMA == id {
				in = append(in, cpu)
			}
		}
		t.all[i] = cpuset.New(in...)
	}
	return t
}

// in returns the CPUs of s in the NUMA nodes of mask.
func (t *topology) in(s cpuset.CPUSet, mask uint64) cpuset.CPUSet {
	var out []int
	for _, cpu := range s.UnsortedList() {
		if c, ok := t.cpus[cpu]; ok && mask&t.bit(c.NUMA) != 0 {
			out = append(out, cpu)
		}
	}
	return cpuset.New(out...)
}

func (t *topology) bit(numa int) uint64 {
	i, _ := slices.BinarySearch(t.numa, numa)
	return 1 << uint(i)
}

// numaNodes counts the NUMA nodes s spans.
func (t *topology) numaNodes(s cpuset.CPUSet) int {
	var mask uint64
	for _, cpu := range s.UnsortedList() {
		if c, ok := t.cpus[cpu]; ok {
			mask |= t.bit(c.NUMA)
		}
	}
	return bits.OnesCount64(mask)
}

// minNUMA is the fewest NUMA nodes whose CPUs, free or not, could hold
// want.
func (t *topology) minNUMA(want int) int {
	sizes := make([]int, len(t.all))
	for i, s := range t.all {
		sizes[i] = s.Size()
	}
	slices.SortFunc(sizes, func(a, b int) int { return cmp.Compare(b, a) })
	sum := 0
	for i, s := range sizes {
		if sum += s; sum >= want {
			return i + 1
		}
	}
	return len(sizes)
}

// bestHint returns the NUMA mask the topology manager would align a
// container of want CPUs with under policy, and whether it admits the
// container. Hints are the masks whose available CPUs hold want; the best
// is a preferred one (as few NUMA nodes as any could be), then the
// narrowest, then the lowest.
func (t *topology) bestHint(available cpuset.CPUSet, want int, policy Policy) (uint64, bool) {
	if len(t.numa) > 63 {
		return 0, policy == BestEffort || policy == None
	}
	least := t.minNUMA(want)
	best, found, preferred := uint64(0), false, false
	for mask := uint64(1); mask < 1<<uint(len(t.numa)); mask++ {
		size := bits.OnesCount64(mask)
		if policy == SingleNUMANode && size != 1 {
			continue
		}
		if t.in(available, mask).Size() < want {
			continue
		}
		p := size == least
		switch {
		case !found,
			p && !preferred,
			p == preferred && size < bits.OnesCount64(best):
			best, found, preferred = mask, true, p
		}
	}
	switch policy {
	case SingleNUMANode, Restricted:
		return best, found && preferred
	default:
		// best-effort and none admit; a container with no hint that
		// fits anywhere is not aligned.
		if !found {
			best = 1<<uint(len(t.numa)) - 1
		}
		return best, true
	}
}

// take picks want CPUs of s, those in the NUMA nodes of mask first (all of
// s when mask is 0), whole physical cores before lone CPUs, lower ids
// first: the kubelet's static CPU manager takes CPUs by topology so.
func (t *topology) take(s cpuset.CPUSet, want int, mask uint64) cpuset.CPUSet {
	if want <= 0 {
		return cpuset.New()
	}
	pools := []cpuset.CPUSet{s}
	if mask != 0 {
		inside := t.in(s, mask)
		pools = []cpuset.CPUSet{inside, s.Difference(inside)}
	}
	var got []int
	for _, pool := range pools {
		got = append(got, t.byCore(pool, want-len(got))...)
		if len(got) == want {
			break
		}
	}
	return cpuset.New(got...)
}

// byCore picks up to want CPUs of pool: the CPUs of cores whose every CPU
// is in the pool first, then the rest, each by (NUMA, socket, core, id).
func (t *topology) byCore(pool cpuset.CPUSet, want int) []int {
	type key struct{ socket, core int }
	siblings := map[key]int{}
	for _, c := range t.cpus {
		siblings[key{c.Socket, c.Core}]++
	}
	free := map[key]int{}
	for _, cpu := range pool.UnsortedList() {
		c := t.cpus[cpu]
		free[key{c.Socket, c.Core}]++
	}
	ids := pool.List()
	slices.SortStableFunc(ids, func(a, b int) int {
		ca, cb := t.cpus[a], t.cpus[b]
		ka, kb := key{ca.Socket, ca.Core}, key{cb.Socket, cb.Core}
		wa, wb := free[ka] == siblings[ka], free[kb] == siblings[kb]
		if wa != wb {
			if wa {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(ca.NUMA, cb.NUMA), cmp.Compare(ca.Socket, cb.Socket), cmp.Compare(ca.Core, cb.Core), cmp.Compare(a, b))
	})
	if len(ids) > want {
		ids = ids[:want]
	}
	return ids
}

// Score is the plugin's score of a node where a pod's CPUs span numaNodes
// NUMA nodes, among nodes where they span at most most: 100 for the
// fewest, 0 for the most. most 0 scores every node 100.
func Score(numaNodes, most int) int64 {
	if most <= 0 {
		return 100
	}
	return int64(100 - 100*numaNodes/most)
}
