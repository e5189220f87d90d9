package lifecycle

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
)

// Condition types set beside Completed and Failed.
const (
	// ConditionPlanned is True once the HyperJob's children are planned
	// and created, False (reason Waiting) while no plan fits the clusters,
	// or (reason Invalid) when the HyperJob cannot be split at all.
	ConditionPlanned = "Planned"
)

// Reasons.
const (
	ReasonPlanned    = "Planned"
	ReasonWaiting    = "Waiting"
	ReasonInvalid    = "Invalid"
	ReasonRolledBack = "RolledBack"
	ReasonCompleted  = "Completed"
	ReasonFailed     = "Failed"
)

// Aggregate is the HyperJob's status from its plan and the plan's
// children: its phase; per replicated job, each child's cluster and state
// and the summed pod counts; the Completed and Failed conditions once
// every planned child has finished.
// The conditions already in status (Planned) are kept; the result is
// otherwise a function of its inputs.
//
// A plan the failure policy failed (rec.Failed) has failed, whatever its
// children are doing.
func Aggregate(hj *trainingv1alpha1.HyperJob, rec *Record, children []batchv1alpha1.Job, now metav1.Time) trainingv1alpha1.HyperJobStatus {
	planned, policyFailed := len(rec.Children), rec.Failed
	st := trainingv1alpha1.HyperJobStatus{ObservedGeneration: hj.Generation, SplitCount: new(int32(planned)), RetryCount: hj.Status.RetryCount}
	for _, c := range hj.Status.Conditions {
		if c.Type != trainingv1alpha1.HyperJobCompleted && c.Type != trainingv1alpha1.HyperJobFailed {
			st.Conditions = append(st.Conditions, c)
		}
	}
	byName := map[string]*trainingv1alpha1.ReplicatedJobStatus{}
	for _, rj := range hj.Spec.ReplicatedJobs {
		st.ReplicatedJobsStatus = append(st.ReplicatedJobsStatus, trainingv1alpha1.ReplicatedJobStatus{Name: rj.Name})
	}
	for i := range st.ReplicatedJobsStatus {
		byName[st.ReplicatedJobsStatus[i].Name] = &st.ReplicatedJobsStatus[i]
	}
	for _, c := range rec.Children {
		if rs := byName[c.ReplicatedJob]; rs != nil {
			if rs.JobClusters == nil {
				rs.JobClusters = map[string]string{}
			}
			rs.JobClusters[c.Name] = c.Cluster
		}
	}
	done, failedNames := 0, []string{}
	for i := range children {
		c := &children[i]
		rs := byName[c.Labels[trainingv1alpha1.ReplicatedJobNameLabel]]
		if rs == nil {
			continue
		}
		if rs.JobStates == nil {
			rs.JobStates = map[string]batchv1alpha1.JobState{}
		}
		rs.JobStates[c.Name] = c.Status.State
		rs.Pending += c.Status.Pending
		rs.Running += c.Status.Running
		rs.Succeeded += c.Status.Succeeded
		rs.Failed += c.Status.Failed
		rs.Terminating += c.Status.Terminating
		rs.Unknown += c.Status.Unknown
		if d, f := Finished(c.Status.State.Phase); d {
			done++
			if f {
				failedNames = append(failedNames, c.Name)
			}
		}
	}
	if policyFailed != "" {
		done, failedNames = planned, []string{policyFailed}
	}
	needed := planned
	if rec.MinAvailable > 0 {
		needed = min(rec.MinAvailable, planned)
	}
	st.Phase = trainingv1alpha1.HyperJobPending
	if needed > 0 && Running(Of(children)) >= needed {
		st.Phase = trainingv1alpha1.HyperJobRunning
	}
	if planned > 0 && done == planned {
		st.Phase = trainingv1alpha1.HyperJobCompletedPhase
		completed := metav1.Condition{Type: trainingv1alpha1.HyperJobCompleted, Status: metav1.ConditionTrue, Reason: ReasonCompleted,
			Message: fmt.Sprintf("all %d child jobs completed", planned), LastTransitionTime: now, ObservedGeneration: hj.Generation}
		failed := metav1.Condition{Type: trainingv1alpha1.HyperJobFailed, Status: metav1.ConditionFalse, Reason: ReasonCompleted,
			Message: completed.Message, LastTransitionTime: now, ObservedGeneration: hj.Generation}
		if len(failedNames) > 0 {
			slices.Sort(failedNames)
			msg := fmt.Sprintf("%d of %d child jobs did not complete: %s", len(failedNames), planned, strings.Join(failedNames, ", "))
			if policyFailed != "" {
				msg = policyFailed
			}
			st.Phase = trainingv1alpha1.HyperJobFailedPhase
			completed.Status, completed.Reason, completed.Message = metav1.ConditionFalse, ReasonFailed, msg
			failed.Status, failed.Reason, failed.Message = metav1.ConditionTrue, ReasonFailed, msg
		}
		for _, c := range []metav1.Condition{completed, failed} {
			if old := meta.FindStatusCondition(hj.Status.Conditions, c.Type); old != nil && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
			st.Conditions = append(st.Conditions, c)
		}
	}
	return st
}
