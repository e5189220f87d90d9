package cache

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// Conflict is why AssumeGroup refused a group of placements: the cache
// changed since the snapshot they were decided on, and one of them no
// longer holds.
type Conflict struct {
	Task types.UID
	Pod  string
	Node string
	Why  string
}

func (c *Conflict) Error() string {
	return fmt.Sprintf("pod %s on node %s: %s", c.Pod, c.Node, c.Why)
}

// AssumeGroup assumes placements together, or none of them: those decided
// on a snapshot that is no longer the cache's state are checked against
// the cache first. A placement on a node whose version moved since the
// snapshot's copy (Placement.Seen) must still fit it as it is now: within
// its idle resources without taking room pipelined tasks wait for, on
// cards with room, on a node not fenced off. A task already assumed or
// bound, or whose pod or node is gone, is refused too. This is where the
// scheduling cycle and the fast lane, deciding on snapshots of their own,
// meet: of two decisions for the last room of a node, the second to get
// here is refused with a Conflict.
func (c *Cache) AssumeGroup(ps []api.Placement) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	done := make([]undo, 0, len(ps))
	for _, p := range ps {
		u, err := c.assumeCheckedLocked(p)
		if err != nil {
			for i := len(done) - 1; i >= 0; i-- {
				c.undoLocked(done[i])
			}
			return err
		}
		done = append(done, u)
	}
	return nil
}

// undo is what assumeCheckedLocked changed: the task it replaced (and its
// claim, for a pipelined task) and the assumed copy.
type undo struct {
	job     api.JobID
	was     *api.TaskInfo
	assumed *api.TaskInfo
	claim   string
}

func (c *Cache) assumeCheckedLocked(p api.Placement) (undo, error) {
	conflict := func(why string, args ...any) error {
		return &Conflict{Task: p.Task.UID, Pod: p.Task.Namespace + "/" + p.Task.Name, Node: p.Node, Why: fmt.Sprintf(why, args...)}
	}
	id := c.taskJob[p.Task.UID]
	e := c.jobToChangeLocked(id)
	var t *api.TaskInfo
	if e != nil {
		t = e.info.Tasks[p.Task.UID]
	}
	if t == nil {
		return undo{}, conflict("the pod is gone")
	}
	if t.NodeName != "" && t.Status != api.Pipelined {
		return undo{}, conflict("the pod is already placed on %s (%s)", t.NodeName, t.Status)
	}
	n := c.nodes[p.Node]
	if n == nil || n.placeholder {
		return undo{}, conflict("the node is gone")
	}
	changed := n.info.Version != p.Seen
	u := undo{job: id, was: t}
	if t.Status == api.Pipelined {
		// A nominated task is bound at last: its claim becomes the bind.
		u.claim = t.NodeName
		c.removeFromNodeLocked(t.NodeName, t.UID)
	}
	if changed && !n.info.FitsNow(t.Resreq) {
		c.restoreClaimLocked(u)
		return undo{}, conflict("the node changed since the decision and no longer has room for the pod: short of %v", t.Resreq.Insufficient(n.info.FutureIdle()))
	}
	if changed && n.info.Fenced {
		c.restoreClaimLocked(u)
		return undo{}, conflict("the node was fenced off (outside this scheduler's NodeShard) since the decision")
	}
	e.info.RemoveTask(t)
	assumed := t.Clone()
	if assumed.FitMemo() == nil {
		// What the cycle derived from the pod, kept with its copy of the
		// task, holds for this one (the evaluator checks that the pod is
		// the same): the node's mirror records it without deriving it
		// again.
		assumed.SetFitMemo(p.Task.FitMemo())
	}
	assumed.Status = api.Binding
	assumed.NodeName = p.Node
	assumed.GPUIndex = p.Task.GPUIndex
	assumed.VGPUDevices = p.Task.VGPUDevices
	e.info.AddTask(assumed)
	n.info.AddTask(assumed)
	u.assumed = assumed
	if changed && !n.info.DevicesFit(assumed) {
		c.undoLocked(u)
		return undo{}, conflict("the node changed since the decision and the pod's cards no longer have room")
	}
	delete(c.nominated, t.UID)
	c.assumed[t.UID] = p.Node
	c.touchJob(id)
	c.touchNode(p.Node)
	return u, nil
}

// restoreClaimLocked puts a pipelined task's claim back on its node.
func (c *Cache) restoreClaimLocked(u undo) {
	if u.claim != "" {
		c.nodeLocked(u.claim).info.AddTask(u.was)
		c.touchNode(u.claim)
	}
}

// undoLocked reverts an assumption assumeCheckedLocked made.
func (c *Cache) undoLocked(u undo) {
	e := c.jobToChangeLocked(u.job)
	c.removeFromNodeLocked(u.assumed.NodeName, u.assumed.UID)
	delete(c.assumed, u.assumed.UID)
	if e != nil {
		e.info.RemoveTask(u.assumed)
		e.info.AddTask(u.was)
	}
	c.restoreClaimLocked(u)
	if u.claim != "" {
		c.nominated[u.was.UID] = u.claim
	}
	c.touchJob(u.job)
	c.touchNode(u.assumed.NodeName)
}
