// Package lifecycle decides what becomes of a HyperJob: Decide turns the
// HyperJob, its child jobs and what the clusters offer into a Decision
// (plan, record, children to make or delete, status, events) that the
// HyperJob controller applies; OnFailure is what its failure policy does
// with failed children, Start when children released together but not
// running in time roll the plan back, and Aggregate its status. It is a
// pure function of its inputs and imports no client, so the simulator
// replays the same decisions.
package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
)

// Child is what the decisions read of a child job.
type Child struct {
	Name  string
	Phase batchv1alpha1.JobPhase
	// Lost, for a child lost with its member (phase Failed), says how.
	Lost string
}

// ReasonMemberLost is the state reason of a child lost with its member:
// the member has been NotReady for Input.LostAfter and the child, not
// finished, is counted as failed.
const ReasonMemberLost = "MemberLost"

// Finished reports whether a child job's phase is final, and whether it
// failed.
func Finished(phase batchv1alpha1.JobPhase) (done, failed bool) {
	switch phase {
	case batchv1alpha1.JobCompleted:
		return true, false
	case batchv1alpha1.JobFailed, batchv1alpha1.JobAborted, batchv1alpha1.JobTerminated:
		return true, true
	}
	return false, false
}

// Started reports whether a child job runs or has done well.
func Started(phase batchv1alpha1.JobPhase) bool {
	switch phase {
	case batchv1alpha1.JobRunning, batchv1alpha1.JobCompleted, batchv1alpha1.JobCompleting:
		return true
	}
	return false
}

// Running counts the children running or done well.
func Running(children []Child) int {
	n := 0
	for _, c := range children {
		if Started(c.Phase) {
			n++
		}
	}
	return n
}

// Action is what the failure policy does.
type Action string

// Actions.
const (
	// None: no child failed, or the HyperJob has no failure policy.
	None Action = ""
	// RestartChildren deletes the failed children; they are made again
	// where they were.
	RestartChildren Action = "RestartChildren"
	// RestartAll deletes every child; the HyperJob is planned again.
	RestartAll Action = "RestartAll"
	// Fail deletes the children still running and fails the HyperJob.
	Fail Action = "Fail"
)

// FailureDecision is what the failure policy does about failed children.
type FailureDecision struct {
	Action Action
	// Failed are the failed children; Delete those the action deletes.
	Failed, Delete []string
	// Restart is the restart this is (1 for the first), MaxRetry how many
	// the policy allows.
	Restart, MaxRetry int32
	// Message says what happened, for events and the HyperJob's status.
	Message string
}

// OnFailure applies the failure policy fp to the children, the HyperJob
// having restarted retries times: RestartChild restarts the failed
// children and RestartAll every child while restarts are left; Fail, or a
// policy out of restarts, fails the HyperJob.
func OnFailure(fp *trainingv1alpha1.FailurePolicy, retries int32, children []Child) FailureDecision {
	if fp == nil {
		return FailureDecision{}
	}
	var failed []string
	for _, c := range children {
		if done, f := Finished(c.Phase); done && f {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) == 0 {
		return FailureDecision{}
	}
	d := FailureDecision{Failed: failed, MaxRetry: int32(trainingv1alpha1.DefaultHyperJobMaxRetry), Restart: retries + 1}
	if fp.MaxRetry != nil {
		d.MaxRetry = *fp.MaxRetry
	}
	action := fp.Action
	if action != trainingv1alpha1.Fail && retries >= d.MaxRetry {
		action = trainingv1alpha1.Fail
	}
	var plain, lost, parts []string
	for _, c := range children {
		if c.Lost != "" {
			lost = append(lost, fmt.Sprintf("child %s lost with its member (%s)", c.Name, c.Lost))
		} else if slices.Contains(failed, c.Name) {
			plain = append(plain, c.Name)
		}
	}
	if len(plain) > 0 {
		parts = append(parts, "child "+strings.Join(plain, ", ")+" failed")
	}
	what := strings.Join(append(parts, lost...), "; ")
	if len(lost) > 0 && action == trainingv1alpha1.RestartChild {
		// A lost child cannot be made again where it was.
		action = trainingv1alpha1.RestartAll
	}
	switch action {
	case trainingv1alpha1.RestartChild:
		d.Action, d.Delete = RestartChildren, failed
		d.Message = fmt.Sprintf("%s: making it again (restart %d of %d)", what, d.Restart, d.MaxRetry)
	case trainingv1alpha1.RestartAll:
		d.Action = RestartAll
		for _, c := range children {
			d.Delete = append(d.Delete, c.Name)
		}
		d.Message = fmt.Sprintf("%s: all children deleted, the HyperJob is planned again (restart %d of %d)", what, d.Restart, d.MaxRetry)
	default:
		d.Action, d.Restart = Fail, 0
		for _, c := range children {
			if done, _ := Finished(c.Phase); !done {
				d.Delete = append(d.Delete, c.Name)
			}
		}
		d.Message = fmt.Sprintf("%s and the failure policy (%s, %d of %d restarts used) fails the HyperJob", what, fp.Action, retries, d.MaxRetry)
	}
	return d
}

// StartDecision is whether released children started in time.
type StartDecision struct {
	// Started: enough children run; nothing to watch.
	Started bool
	// RollBack: the start timeout passed with too few running; every
	// child goes and the HyperJob is planned again. Message says so.
	RollBack bool
	Message  string
	// Wait is how long is left before the timeout, when neither.
	Wait time.Duration
}

// Start decides, for a plan needing need running children whose children
// have all been released for released, whether they started within
// timeout.
func Start(need int, children []Child, released, timeout time.Duration) StartDecision {
	running := Running(children)
	if running >= need {
		return StartDecision{Started: true}
	}
	if left := timeout - released; left > 0 {
		return StartDecision{Wait: left}
	}
	return StartDecision{RollBack: true, Message: fmt.Sprintf(
		"%d of %d child jobs ran within %s of their release; all were deleted and the HyperJob is planned again", running, need, timeout)}
}

// Of returns what the decisions read of child jobs.
func Of(jobs []batchv1alpha1.Job) []Child {
	out := make([]Child, len(jobs))
	for i, j := range jobs {
		out[i] = Child{Name: j.Name, Phase: j.Status.State.Phase}
		if j.Status.State.Reason == ReasonMemberLost {
			out[i].Lost = j.Status.State.Message
		}
	}
	return out
}
