// Package writeback turns what a cycle concluded into the status the scheduler
// owns: PodGroup phase, counts and conditions, and Queue allocation and job
// counts. Desired* are pure; Writer applies only what changed.
package writeback

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// ScheduledReason is the reason of the Scheduled condition and of a False
// Unschedulable condition.
const ScheduledReason = "Scheduled"

// DesiredPodGroupStatus is the status a job's PodGroup should show after a
// cycle. Conditions keep their transition time while their status holds.
func DesiredPodGroupStatus(job *api.JobInfo, outcome *framework.JobOutcome, now metav1.Time) schedulingv1beta1.PodGroupStatus {
	// As the API server keeps it: a time read back equals the one written.
	now = now.Rfc3339Copy()
	var cur schedulingv1beta1.PodGroupStatus
	if job.PodGroup != nil {
		cur = job.PodGroup.Status
	}
	st := schedulingv1beta1.PodGroupStatus{
		Phase:      framework.JobPhase(job),
		Running:    job.CountIn(api.Running),
		Succeeded:  job.CountIn(api.Succeeded),
		Failed:     job.CountIn(api.Failed),
		Conditions: append([]schedulingv1beta1.PodGroupCondition(nil), cur.Conditions...),
	}
	unschedulable := outcome.Unschedulable()
	switch {
	case unschedulable != nil && st.Phase != schedulingv1beta1.PodGroupRunning:
		st.Conditions = setCondition(st.Conditions, schedulingv1beta1.PodGroupCondition{
			Type:    schedulingv1beta1.PodGroupUnschedulableType,
			Status:  corev1.ConditionTrue,
			Reason:  unschedulable.Type,
			Message: unschedulable.Message,
		}, now)
	case st.Phase == schedulingv1beta1.PodGroupRunning || st.Phase == schedulingv1beta1.PodGroupCompleted:
		st.Conditions = setCondition(st.Conditions, schedulingv1beta1.PodGroupCondition{
			Type:    schedulingv1beta1.PodGroupScheduled,
			Status:  corev1.ConditionTrue,
			Reason:  ScheduledReason,
			Message: "enough tasks of the gang are placed to start it",
		}, now)
		if hasCondition(st.Conditions, schedulingv1beta1.PodGroupUnschedulableType) {
			st.Conditions = setCondition(st.Conditions, schedulingv1beta1.PodGroupCondition{
				Type:   schedulingv1beta1.PodGroupUnschedulableType,
				Status: corev1.ConditionFalse,
				Reason: ScheduledReason,
			}, now)
		}
	}
	if len(st.Conditions) == 0 {
		st.Conditions = nil
	}
	return st
}

// keepTransitionTimes gives desired's conditions the transition times of
// last, the status last written or queued, where a condition of the same
// type has the same status there: a transition decided once keeps its time
// until the informer shows it, rather than taking a new one at every sync,
// each a new write.
func keepTransitionTimes(desired *schedulingv1beta1.PodGroupStatus, last schedulingv1beta1.PodGroupStatus) {
	for i := range desired.Conditions {
		d := &desired.Conditions[i]
		if l := condition(last.Conditions, d.Type); l != nil && l.Status == d.Status {
			d.LastTransitionTime = l.LastTransitionTime
		}
	}
}

func hasCondition(conds []schedulingv1beta1.PodGroupCondition, t schedulingv1beta1.PodGroupConditionType) bool {
	return condition(conds, t) != nil
}

// setCondition sets the condition of c's type, keeping the transition time
// when the status is unchanged.
func setCondition(conds []schedulingv1beta1.PodGroupCondition, c schedulingv1beta1.PodGroupCondition, now metav1.Time) []schedulingv1beta1.PodGroupCondition {
	for i := range conds {
		if conds[i].Type != c.Type {
			continue
		}
		c.LastTransitionTime = conds[i].LastTransitionTime
		if conds[i].Status != c.Status {
			c.LastTransitionTime = now
		}
		conds[i] = c
		return conds
	}
	c.LastTransitionTime = now
	return append(conds, c)
}

// QueueStatus is the part of a Queue's status the scheduler owns.
type QueueStatus struct {
	Allocated corev1.ResourceList
	Pending   int32
	Inqueue   int32
	Running   int32
	Unknown   int32
	Completed int32
}

// DesiredQueueStatuses computes every queue's allocation and PodGroup counts
// from the totals the cache keeps (api.Totals): what the snapshot's jobs
// were when it was taken, not placements made in the cycle since, which
// the next sync's snapshot shows.
func DesiredQueueStatuses(snap *api.Snapshot) map[api.QueueID]QueueStatus {
	totals := snap.Totals()
	out := make(map[api.QueueID]QueueStatus, len(snap.Queues))
	for id := range snap.Queues {
		t := totals.Queue(id)
		s := QueueStatus{
			Allocated: t.Allocated.ResourceList(),
			Pending:   t.Phases.Pending,
			Inqueue:   t.Phases.Inqueue,
			Running:   t.Phases.Running,
			Unknown:   t.Phases.Unknown,
			Completed: t.Phases.Completed,
		}
		delete(s.Allocated, corev1.ResourcePods)
		out[id] = s
	}
	return out
}

// SettleHold is how long a PodGroup status change that leaves the phase as
// it is (pod counts moving as a gang's pods start one after another, the
// Scheduled condition) may wait for the changes that follow it, so that
// they reach the API server as one write; queue totals wait as long.
const SettleHold = 2 * time.Second

// StartHold is how long a phase change that no reader waits on may wait
// for the changes that follow it: a placed gang's Running, once its binds
// are done, for its pods to start, so that the phase and the counts of its
// started pods reach the API server as one write rather than one for the
// phase and more as the pods start; the admission (Inqueue) of a job whose
// pods all exist for its placement. Either is written at once when what it
// waits for comes. Pods commonly start within seconds of their binds, and
// within tens of seconds where images are pulled or the kubelets are busy:
// 30 seconds covers most such starts and shows a placed gang's phase late
// by no more than that where its pods take longer still.
const StartHold = 30 * time.Second

// UntilBound is the hold of a change that waits for the binds of the job's
// placed pods: it is not queued while any of them is in flight (and a write
// queued for it before is dropped), and once they are done it is decided
// again, its hold counted from then. Binds end, in success or failure,
// within the binder's timeout.
const UntilBound time.Duration = -1

// HoldInput is what PodGroupHold decides from besides the two statuses.
type HoldInput struct {
	// Unstarted counts the job's pods placed but not running yet.
	Unstarted int32
	// Binding counts those of them whose binds are not done yet: placed in
	// a cycle and not yet seen bound.
	Binding int32
	// PodsMissing: the job has fewer pods than its minimum, which a
	// controller may create only once it is admitted.
	PodsMissing bool
	// QueueOpen: the job's queue is open.
	QueueOpen bool
}

// PodGroupHold is how long the change of a job's PodGroup status from cur
// to desired may be held before it is written, or UntilBound.
//
// A change of phase is written at once, as is a set Unschedulable condition
// (a person or a tool waits on it; it changes only with its reason or its
// numbers), where a reader acts on it: a job controller creates a gang's
// pods once its PodGroup leaves Pending and restarts a job whose PodGroup
// turns Unknown; the queue controller keeps a closing queue Closing while a
// PodGroup in it is Inqueue, Running or Unknown. Two changes of phase have
// no such reader and wait: a placed gang's Running while some of its placed
// pods have not started waits for their binds (UntilBound), then StartHold
// for their start; the admission of a job with all its pods waits StartHold
// for its placement. The queue controller also counts the scheduler's queue
// totals, which count both at once, and in a queue that is not open
// neither is held from Pending; the scheduler keeps the phase it decided
// meanwhile (cache.KeepPhases). The rest (counts, conditions) waits
// SettleHold.
func PodGroupHold(cur, desired schedulingv1beta1.PodGroupStatus, in HoldInput) time.Duration {
	if c := condition(desired.Conditions, schedulingv1beta1.PodGroupUnschedulableType); c != nil && c.Status == corev1.ConditionTrue {
		return 0
	}
	if cur.Phase == desired.Phase {
		return SettleHold
	}
	pending := cur.Phase == "" || cur.Phase == schedulingv1beta1.PodGroupPending
	switch {
	case desired.Phase == schedulingv1beta1.PodGroupInqueue && pending && !in.PodsMissing && in.QueueOpen:
		return StartHold
	case desired.Phase == schedulingv1beta1.PodGroupRunning && in.Unstarted > 0 &&
		(cur.Phase == schedulingv1beta1.PodGroupInqueue || pending && in.QueueOpen):
		if in.Binding > 0 {
			return UntilBound
		}
		return StartHold
	}
	return 0
}

func condition(conds []schedulingv1beta1.PodGroupCondition, t schedulingv1beta1.PodGroupConditionType) *schedulingv1beta1.PodGroupCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
