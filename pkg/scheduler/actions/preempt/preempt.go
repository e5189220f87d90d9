// Package preempt lets a job that cannot be placed evict lower-priority
// pods of its own queue to make room: for each task, the node where the
// fewest and least important victims free enough room; the job's evictions
// and placements are one transaction, committed only when they give the job
// its gang.
package preempt

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework/pq"
)

// Name is the action's name in the configuration.
const Name = "preempt"

// Action is the preempt action.
type Action struct{}

var _ framework.Action = &Action{}

// New returns the action.
func New() *Action { return &Action{} }

// Name returns the action's name.
func (a *Action) Name() string { return Name }

// Execute runs the action on a session.
func (a *Action) Execute(ssn *framework.Session) {
	byQueue := ssn.NewJobQueues()
	for _, job := range ssn.Snapshot.Jobs {
		if !framework.Admitted(job) || job.PendingCount() == 0 || !ssn.JobStarving(job) || neverPreempts(job) {
			continue
		}
		if _, ok := ssn.Snapshot.Queues[job.Queue]; !ok || ssn.JobValid(job) != nil {
			continue
		}
		byQueue.Push(job)
	}
	queues := byQueue.Queues()
	for {
		queue, ok := queues.Pop()
		if !ok {
			return
		}
		jobs := byQueue.Jobs(queue.UID)
		for {
			job, ok := jobs.Pop()
			if !ok {
				break
			}
			preemptFor(ssn, job)
		}
	}
}

// neverPreempts: the job's pods may not evict others
// (spec.preemptionPolicy Never, from their PriorityClass).
func neverPreempts(job *api.JobInfo) bool {
	for _, t := range job.Tasks {
		if p := t.Pod.Spec.PreemptionPolicy; p != nil && *p == corev1.PreemptNever {
			return true
		}
	}
	return false
}

// preemptFor places the job's pending tasks, evicting where needed, and
// commits when the job then has its gang (placed or waiting for the room
// being freed); otherwise nothing happens.
func preemptFor(ssn *framework.Session, job *api.JobInfo) {
	stmt := ssn.NewStatement()
	tasks := pq.New(ssn.TaskLess)
	for _, t := range job.ByStatus[api.Pending] {
		tasks.Push(t)
	}
	for {
		t, ok := tasks.Pop()
		if !ok || ssn.JobReady(job) {
			break
		}
		if node, future, _ := ssn.FindNode(t); node != nil {
			var err error
			if future {
				err = stmt.Pipeline(t, node)
			} else {
				err = stmt.Allocate(t, node)
			}
			if err != nil {
				ssn.Logger.Error(err, "Placing task failed", "task", t.Name)
				break
			}
			continue
		}
		node, victims := chooseVictims(ssn, job, t)
		if node == nil {
			break
		}
		reason := fmt.Sprintf("preempted by %s/%s (job %s, priority %d)", t.Namespace, t.Name, job.Name, job.Priority)
		failed := false
		for _, v := range victims {
			if err := stmt.Evict(v, reason); err != nil {
				ssn.Logger.Error(err, "Evicting task failed", "task", v.Name)
				failed = true
				break
			}
		}
		if failed {
			break
		}
		if err := stmt.Pipeline(t, node); err != nil {
			ssn.Logger.Error(err, "Pipelining task failed", "task", t.Name)
			break
		}
	}
	if ssn.JobReady(job) || ssn.JobPipelined(job) {
		stmt.Commit()
		return
	}
	stmt.Discard()
}

// choice is a node with the victims that would free room there.
type choice struct {
	node    *api.NodeInfo
	victims []*api.TaskInfo
	jobs    int
	top     int32
}

// better orders choices: fewest jobs touched, then the least important
// victim at the top, then fewest victims, then the earlier node.
func (c *choice) better(o *choice) bool {
	if c.jobs != o.jobs {
		return c.jobs < o.jobs
	}
	if c.top != o.top {
		return c.top < o.top
	}
	return len(c.victims) < len(o.victims)
}

// chooseVictims finds the node where evicting running tasks of lower
// priority in the same queue, as the plugins allow, frees room for t.
func chooseVictims(ssn *framework.Session, job *api.JobInfo, t *api.TaskInfo) (*api.NodeInfo, []*api.TaskInfo) {
	var best *choice
	for _, n := range ssn.Snapshot.NodeList {
		var candidates []*api.TaskInfo
		for _, v := range n.Tasks {
			if v.Status != api.Running && v.Status != api.Bound {
				continue
			}
			vj := ssn.Snapshot.Jobs[v.Job]
			if vj == nil || vj.UID == job.UID || vj.Queue != job.Queue || vj.Priority >= job.Priority {
				continue
			}
			candidates = append(candidates, v)
		}
		if len(candidates) == 0 {
			continue
		}
		candidates = ssn.Preemptable(t, candidates)
		// Would the task fit at all with every candidate gone?
		if len(candidates) == 0 || ssn.PredicateWithout(t, n, candidates) != nil {
			continue
		}
		// Least important first: lower job priority, then lower pod
		// priority, then the most recently created, then by name.
		slices.SortFunc(candidates, func(a, b *api.TaskInfo) int {
			ja, jb := ssn.Snapshot.Jobs[a.Job], ssn.Snapshot.Jobs[b.Job]
			return cmp.Or(
				cmp.Compare(ja.Priority, jb.Priority),
				cmp.Compare(a.Priority, b.Priority),
				b.Pod.CreationTimestamp.Compare(a.Pod.CreationTimestamp.Time),
				cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name),
			)
		})
		room := n.FutureIdle()
		var victims []*api.TaskInfo
		jobs := map[api.JobID]bool{}
		top := int32(math.MinInt32)
		for _, v := range candidates {
			if t.Resreq.LessEqual(room) {
				break
			}
			victims = append(victims, v)
			room.Add(v.Resreq)
			jobs[v.Job] = true
			top = max(top, ssn.Snapshot.Jobs[v.Job].Priority)
		}
		if len(victims) == 0 || !t.Resreq.LessEqual(room) {
			continue
		}
		victims = wholeGangs(ssn, victims, candidates)
		if ssn.PredicateWithout(t, n, victims) != nil {
			continue
		}
		c := &choice{node: n, victims: victims, jobs: len(jobs), top: top}
		if best == nil || c.better(best) {
			best = c
		}
	}
	if best == nil {
		return nil, nil
	}
	return best.node, best.victims
}

// wholeGangs adds to the victims the other candidates of each job the
// victims would leave short of its gang: such a job is evicted whole (the
// gang plugin lets a job's candidates through only when they are all its
// placed tasks, or when it can spare them).
func wholeGangs(ssn *framework.Session, victims, candidates []*api.TaskInfo) []*api.TaskInfo {
	taken := map[api.JobID]int32{}
	chosen := map[api.TaskID]bool{}
	for _, v := range victims {
		taken[v.Job]++
		chosen[v.UID] = true
	}
	for _, c := range candidates {
		job := ssn.Snapshot.Jobs[c.Job]
		if chosen[c.UID] || taken[c.Job] == 0 || job.PlacedCount()-taken[c.Job] >= job.MinAvailable {
			continue
		}
		victims = append(victims, c)
		chosen[c.UID] = true
	}
	return victims
}
