package api

import (
	"slices"
	"strings"

	"github.com/caldera-sh/caldera/pkg/loadaware"
	"github.com/caldera-sh/caldera/pkg/topology"
	"github.com/caldera-sh/caldera/pkg/topology/numa"
)

// Snapshot is the state one scheduling cycle decides on. Decision code may
// change it freely, with one rule: a job, or a task of it, is changed only
// through Own. The cache hands out copies of what changed and takes the
// touched objects back as dirty; jobs with nothing to place it lends
// rather than copies, and Own copies one of those before the cycle changes
// it. A task placed on a node is one object in its job's Tasks and its
// node's Tasks.
type Snapshot struct {
	Nodes map[string]*NodeInfo
	// NodeList is Nodes sorted by name, so that decisions are deterministic.
	NodeList []*NodeInfo
	Jobs     map[JobID]*JobInfo
	Queues   map[QueueID]*QueueInfo
	// Topology is the network topology; never nil, empty without
	// HyperNodes. It is shared between snapshots and must not be changed.
	Topology *topology.Tree
	// NUMA is each node's report of its CPUs (Numatopology), by node name;
	// nodes that report none are absent. Shared between snapshots: it
	// must not be changed.
	NUMA map[string]*numa.Report
	// Usage is each node's measured use (NodeUsage), by node name; nodes
	// without one are absent. Shared between snapshots: it must not be
	// changed.
	Usage map[string]*loadaware.Usage

	// jobList is Jobs sorted by ID, workList those of them that wait
	// (JobInfo.Waits); both made on first use unless the cache set them.
	jobList, workList []*JobInfo
	workSet           bool
	totals            *Totals
	// lent are the jobs shared with the cache, which nobody changes.
	lent map[JobID]bool
}

// SetLent tells the snapshot which of its jobs it shares with the cache.
// Own takes them off the map.
func (s *Snapshot) SetLent(lent map[JobID]bool) { s.lent = lent }

// Lent reports whether the snapshot shares job id with the cache (Own has
// not copied it yet).
func (s *Snapshot) Lent(id JobID) bool { return s.lent[id] }

// Own returns job id for the cycle to change, nil when the snapshot does
// not hold it. A job the snapshot shares with the cache is copied first:
// the copy takes its place in Jobs and JobList and holds its nodes' copies
// of its placed tasks. Pointers to the shared job and its tasks taken
// before stay valid, and show the job as the cycle began.
func (s *Snapshot) Own(id JobID) *JobInfo {
	j := s.Jobs[id]
	if j == nil || !s.lent[id] {
		return j
	}
	c := j.CloneSharing(func(t *TaskInfo) *TaskInfo {
		if n := s.Nodes[t.NodeName]; n != nil {
			if nt := n.Tasks[t.UID]; nt != nil && nt != t && nt.Copies(t) {
				return nt
			}
		}
		return nil
	})
	// Nodes that hold the shared job's tasks take the copies.
	for uid, t := range j.Tasks {
		if n := s.Nodes[t.NodeName]; n != nil && n.Tasks[uid] == t {
			n.Tasks[uid] = c.Tasks[uid]
		}
	}
	s.Jobs[id] = c
	delete(s.lent, id)
	if i, ok := slices.BinarySearchFunc(s.jobList, id, func(x *JobInfo, id JobID) int {
		return strings.Compare(string(x.UID), string(id))
	}); ok {
		s.jobList[i] = c
	}
	return c
}

// SetLists gives the snapshot its sorted job list and the sorted list of
// the jobs that wait, kept by the cache from one snapshot to the next.
func (s *Snapshot) SetLists(jobs, work []*JobInfo) {
	s.jobList, s.workList, s.workSet = jobs, work, true
}

// SetTotals gives the snapshot its totals, kept by the cache.
func (s *Snapshot) SetTotals(t *Totals) { s.totals = t }

// Totals returns the sums over the snapshot's nodes and jobs as the cycle
// began. They must not be changed.
func (s *Snapshot) Totals() *Totals {
	if s.totals == nil {
		s.totals = ComputeTotals(s.NodeList, s.Jobs)
	}
	return s.totals
}

// WorkList returns the jobs that wait (JobInfo.Waits) as the cycle began,
// sorted by ID: the only jobs enqueue, allocate and backfill act on.
func (s *Snapshot) WorkList() []*JobInfo {
	if !s.workSet {
		s.workList = nil
		for _, j := range s.JobList() {
			if j.Waits() {
				s.workList = append(s.workList, j)
			}
		}
		s.workSet = true
	}
	return s.workList
}

// JobList returns the jobs sorted by ID. Decisions iterate jobs in this
// order rather than the map's, so that the same snapshot gives the same
// decisions even where the order of their work items matters (heaps whose
// items change while queued). The snapshot's job set must not change after
// the first call.
func (s *Snapshot) JobList() []*JobInfo {
	if s.jobList == nil || len(s.jobList) != len(s.Jobs) {
		s.jobList = make([]*JobInfo, 0, len(s.Jobs))
		for _, j := range s.Jobs {
			s.jobList = append(s.jobList, j)
		}
		slices.SortFunc(s.jobList, func(a, b *JobInfo) int {
			switch {
			case a.UID < b.UID:
				return -1
			case a.UID > b.UID:
				return 1
			}
			return 0
		})
	}
	return s.jobList
}

// NewSnapshot assembles a snapshot from its parts and sorts the node list.
func NewSnapshot(nodes []*NodeInfo, jobs []*JobInfo, queues []*QueueInfo) *Snapshot {
	s := &Snapshot{
		Nodes:  make(map[string]*NodeInfo, len(nodes)),
		Jobs:   make(map[JobID]*JobInfo, len(jobs)),
		Queues: make(map[QueueID]*QueueInfo, len(queues)),
	}
	for _, n := range nodes {
		s.Nodes[n.Name] = n
	}
	for _, j := range jobs {
		s.Jobs[j.UID] = j
	}
	for _, q := range queues {
		s.Queues[q.UID] = q
	}
	s.Topology = topology.Build(nil, nil)
	s.SortNodes()
	return s
}

// SortNodes rebuilds NodeList from Nodes.
func (s *Snapshot) SortNodes() {
	s.NodeList = s.NodeList[:0]
	for _, n := range s.Nodes {
		s.NodeList = append(s.NodeList, n)
	}
	slices.SortFunc(s.NodeList, func(a, b *NodeInfo) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
}

// Children returns the queues whose parent is id, sorted by name.
func (s *Snapshot) Children(id QueueID) []*QueueInfo {
	var out []*QueueInfo
	for _, q := range s.Queues {
		if q.Parent == id && q.UID != id {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, func(a, b *QueueInfo) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// TotalAllocatable is the sum of every node's allocatable resources, a
// copy the caller may change.
func (s *Snapshot) TotalAllocatable() *Resource { return s.Totals().Allocatable.Clone() }
