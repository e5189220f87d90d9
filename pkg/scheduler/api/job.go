package api

import (
	"iter"
	"maps"
	"time"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// JobID identifies a job: "<namespace>/<podgroup name>".
type JobID string

// NewJobID returns the ID of the PodGroup namespace/name.
//
// IDs are canonical: every event of a pod works its job's ID out again, and
// the copies of the ID that tasks, sets and snapshots keep share one string.
func NewJobID(namespace, name string) JobID {
	return JobID(unique.Make(namespace + "/" + name).Value())
}

// JobInfo is a gang: a PodGroup and the pods that belong to it. A pod that
// names no PodGroup forms a job of its own with minAvailable 1 (a "shadow"
// job without a PodGroup object).
type JobInfo struct {
	UID       JobID
	Name      string
	Namespace string
	Queue     QueueID
	Priority  int32
	// MinAvailable is the gang size: how many tasks must be placeable
	// together before any is placed.
	MinAvailable int32
	// MinTaskMember is the gang size per task role.
	MinTaskMember map[string]int32
	// MinResources, when set, is what the job needs to be admitted.
	MinResources    *Resource
	NetworkTopology *schedulingv1beta1.NetworkTopologySpec
	// PodGroup is nil for a shadow job, and for pods whose PodGroup does not
	// exist (yet); such a job is never scheduled.
	PodGroup *schedulingv1beta1.PodGroup
	// Shadow: the job of a pod that names no PodGroup.
	Shadow bool
	// FastLane: a shadow job the fast lane places rather than the
	// scheduling cycle (the cache decides, from the scheduler's
	// configuration).
	FastLane          bool
	Phase             schedulingv1beta1.PodGroupPhase
	CreationTimestamp metav1.Time
	// Preemptable is the PodGroup's volcano.sh/preemptable annotation, for
	// the pods that do not say themselves; nil when it does not say.
	Preemptable *bool
	// EvictedBy holds the jobs that tasks of this job were evicted for, and
	// when last; nil when none.
	EvictedBy map[JobID]time.Time
	// PreemptNever: the job's PriorityClass (its PodGroup's, else its
	// pods') has preemptionPolicy Never, so it never evicts others.
	PreemptNever bool

	Tasks map[TaskID]*TaskInfo
	// counts are how many tasks are in each status (CountIn, TasksIn).
	counts [numTaskStatuses]int32
	// bestEffortPending is how many of the pending tasks are best-effort
	// (BestEffortPending).
	bestEffortPending int32
	// Allocated is the request of the tasks that count for the job's
	// allocation (TaskStatus.CountsForJob).
	Allocated *Resource
	// TotalRequest is the request of all tasks.
	TotalRequest *Resource
}

// NewJobInfo returns an empty job.
func NewJobInfo(uid JobID) *JobInfo {
	return &JobInfo{
		UID:          uid,
		Tasks:        map[TaskID]*TaskInfo{},
		Allocated:    &Resource{},
		TotalRequest: &Resource{},
	}
}

// SetPodGroup sets the job's gang and queue parameters from its PodGroup.
func (j *JobInfo) SetPodGroup(pg *schedulingv1beta1.PodGroup) {
	j.PodGroup = pg
	j.Name = pg.Name
	j.Namespace = pg.Namespace
	j.Queue = QueueID(pg.Spec.Queue)
	if j.Queue == "" {
		j.Queue = schedulingv1beta1.DefaultQueue
	}
	j.MinAvailable = pg.Spec.MinMember
	j.MinTaskMember = pg.Spec.MinTaskMember
	j.MinResources = nil
	if pg.Spec.MinResources != nil {
		j.MinResources = NewResource(*pg.Spec.MinResources)
	}
	j.NetworkTopology = pg.Spec.NetworkTopology
	j.Preemptable = nil
	if v, ok := PreemptableOf(pg.Annotations, pg.Labels); ok {
		j.Preemptable = &v
	}
	j.Phase = pg.Status.Phase
	j.CreationTimestamp = pg.CreationTimestamp
}

// AddTask adds a task in its current status.
func (j *JobInfo) AddTask(t *TaskInfo) {
	j.Tasks[t.UID] = t
	j.index(t)
	j.TotalRequest.Add(t.Resreq)
	if t.Status.CountsForJob() {
		j.Allocated.Add(t.Resreq)
	}
}

// RemoveTask removes a task.
func (j *JobInfo) RemoveTask(t *TaskInfo) {
	cur, ok := j.Tasks[t.UID]
	if !ok {
		return
	}
	j.unindex(cur)
	delete(j.Tasks, t.UID)
	j.TotalRequest.Sub(cur.Resreq)
	if cur.Status.CountsForJob() {
		j.Allocated.Sub(cur.Resreq)
	}
}

// SetTaskStatus moves a task of this job to a new status.
func (j *JobInfo) SetTaskStatus(t *TaskInfo, status TaskStatus) {
	if t.Status.CountsForJob() {
		j.Allocated.Sub(t.Resreq)
	}
	j.unindex(t)
	t.Status = status
	j.index(t)
	if t.Status.CountsForJob() {
		j.Allocated.Add(t.Resreq)
	}
}

func (j *JobInfo) index(t *TaskInfo) {
	if t.Status.valid() {
		j.counts[t.Status]++
	}
	if t.Status == Pending && t.BestEffort {
		j.bestEffortPending++
	}
}

func (j *JobInfo) unindex(t *TaskInfo) {
	if t.Status.valid() {
		j.counts[t.Status]--
	}
	if t.Status == Pending && t.BestEffort {
		j.bestEffortPending--
	}
}

// TasksIn yields the job's tasks in status s, in no particular order. The
// loop may change the status of the task it is given, or of others: a task
// is yielded if it is in s when the iteration reaches it.
//
// The job keeps no per-status index beyond counts: a job of one pod (most
// of a cluster's jobs) costs the scheduler its Tasks map and no more, and
// the loops that want one status go over a job's tasks once anyway.
func (j *JobInfo) TasksIn(s TaskStatus) iter.Seq[*TaskInfo] {
	return func(yield func(*TaskInfo) bool) {
		if j.CountIn(s) == 0 {
			return
		}
		for _, t := range j.Tasks {
			if t.Status == s && !yield(t) {
				return
			}
		}
	}
}

// classOf is the PriorityClass the job's PodGroup names, "" without one.
func (j *JobInfo) classOf() string {
	if j.PodGroup == nil {
		return ""
	}
	return j.PodGroup.Spec.PriorityClassName
}

// TaskPreemptable reports whether one of the job's tasks may be evicted
// for other work: as its pod says, else as its PodGroup says, else yes.
func (j *JobInfo) TaskPreemptable(t *TaskInfo) bool {
	switch {
	case t.Preemptable != nil:
		return *t.Preemptable
	case j.Preemptable != nil:
		return *j.Preemptable
	}
	return true
}

// CountIn returns how many tasks are in any of the statuses.
func (j *JobInfo) CountIn(statuses ...TaskStatus) int32 {
	var n int32
	for _, s := range statuses {
		if s.valid() {
			n += j.counts[s]
		}
	}
	return n
}

// PlacedCount is the number of tasks that count towards the gang: placed,
// about to be placed, or already succeeded.
func (j *JobInfo) PlacedCount() int32 {
	return j.CountIn(Allocated, Pipelined, Binding, Bound, Running, Succeeded)
}

// BestEffortPending is the number of pending tasks that request no CPU or
// memory (TaskInfo.BestEffort), which the backfill action places.
func (j *JobInfo) BestEffortPending() int32 { return j.bestEffortPending }

// PendingCount is the number of tasks waiting for a node.
func (j *JobInfo) PendingCount() int32 { return j.CountIn(Pending) }

// PlacedByRole counts placed tasks per role.
func (j *JobInfo) PlacedByRole() map[string]int32 {
	out := map[string]int32{}
	for _, t := range j.Tasks {
		if t.Status.Placed() {
			out[t.Role]++
		}
	}
	return out
}

// RolesMet reports whether every role of MinTaskMember has at least its
// minimum of tasks in a status counted.
func (j *JobInfo) RolesMet(counted func(TaskStatus) bool) bool {
	if len(j.MinTaskMember) == 0 {
		return true
	}
	n := map[string]int32{}
	for _, t := range j.Tasks {
		if counted(t.Status) {
			n[t.Role]++
		}
	}
	for role, min := range j.MinTaskMember {
		if n[role] < min {
			return false
		}
	}
	return true
}

// IsShadow reports whether the job is a pod without a PodGroup.
func (j *JobInfo) IsShadow() bool { return j.Shadow }

// Admitted reports whether the job may be placed: its PodGroup was
// admitted (Inqueue or later), or it is a pod without a PodGroup.
func (j *JobInfo) Admitted() bool {
	if j.Shadow {
		return true
	}
	switch j.Phase {
	case schedulingv1beta1.PodGroupInqueue, schedulingv1beta1.PodGroupRunning, schedulingv1beta1.PodGroupUnknown:
		return true
	}
	return false
}

// Waits reports whether a cycle has something to decide for the job: it is
// not admitted yet, or has tasks to place (pending) or placed on room not
// yet free (pipelined).
func (j *JobInfo) Waits() bool {
	return !j.Admitted() || j.CountIn(Pending, Pipelined) > 0
}

// Schedulable reports whether the job can be scheduled at all: it is a
// shadow job or its PodGroup exists.
func (j *JobInfo) Schedulable() bool { return j.Shadow || j.PodGroup != nil }

// Clone returns a deep copy: tasks are copied, pods and PodGroup shared.
func (j *JobInfo) Clone() *JobInfo { return j.CloneSharing(nil) }

// CloneSharing is Clone, except that a task for which copied returns a
// copy already made (the copy on a snapshot's node) takes that copy rather
// than a new one. copied returns nil for a task it has no copy of.
func (j *JobInfo) CloneSharing(copied func(*TaskInfo) *TaskInfo) *JobInfo {
	c := *j
	c.MinTaskMember = maps.Clone(j.MinTaskMember)
	c.EvictedBy = maps.Clone(j.EvictedBy)
	c.Tasks = make(map[TaskID]*TaskInfo, len(j.Tasks))
	c.Allocated = j.Allocated.Clone()
	c.TotalRequest = j.TotalRequest.Clone()
	if j.MinResources != nil {
		c.MinResources = j.MinResources.Clone()
	}
	for id, t := range j.Tasks {
		if copied != nil {
			if ct := copied(t); ct != nil {
				c.Tasks[id] = ct
				continue
			}
		}
		c.Tasks[id] = t.Clone()
	}
	return &c
}
