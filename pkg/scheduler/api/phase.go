package api

import (
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// JobPhase is the PodGroup phase a job is in, as its tasks now are:
// Running once enough tasks are placed or running to meet its minimum;
// Unknown when a job that was Running dropped below it; Completed when every
// task has ended and enough succeeded; otherwise Inqueue once admitted, else
// Pending.
func JobPhase(job *JobInfo) schedulingv1beta1.PodGroupPhase {
	placed := job.CountIn(Allocated, Binding, Bound, Running)
	succeeded := job.CountIn(Succeeded)
	ended := succeeded + job.CountIn(Failed)
	total := int32(len(job.Tasks))
	switch {
	case total > 0 && ended == total && succeeded >= job.MinAvailable:
		return schedulingv1beta1.PodGroupCompleted
	case placed+succeeded >= job.MinAvailable && placed > 0 && job.RolesMet(startedOrDone):
		return schedulingv1beta1.PodGroupRunning
	case job.Phase == schedulingv1beta1.PodGroupRunning || job.Phase == schedulingv1beta1.PodGroupUnknown:
		if placed > 0 {
			return schedulingv1beta1.PodGroupUnknown
		}
		return schedulingv1beta1.PodGroupPending
	case job.Phase == schedulingv1beta1.PodGroupInqueue:
		return schedulingv1beta1.PodGroupInqueue
	}
	return schedulingv1beta1.PodGroupPending
}

// startedOrDone: a task placed for good (allocated in a committed
// placement, binding, bound, running) or succeeded.
func startedOrDone(s TaskStatus) bool {
	switch s {
	case Allocated, Binding, Bound, Running, Succeeded:
		return true
	}
	return false
}
