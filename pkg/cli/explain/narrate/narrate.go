// Package narrate turns what the scheduler and caldera-global record about
// a job (PodGroup conditions, events, the binding's suspension) into plain
// sentences with their numbers: `calderactl explain`.
package narrate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
)

// Facts are what is known of one job.
type Facts struct {
	Now time.Time
	Job *batchv1alpha1.Job
	// PodGroup is the job's (or the PodGroup explained); nil when none.
	PodGroup *schedulingv1beta1.PodGroup
	Queue    *schedulingv1beta1.Queue
	// Binding is the job's ResourceBinding on a Karmada API server; nil
	// elsewhere.
	Binding *workv1alpha2.ResourceBinding
	// Events are those of the job, its PodGroup and its pods.
	Events []corev1.Event
}

// Reasons the dispatcher gives a held job's events.
var holdReasons = []string{"QueueNotFound", "QueueClosed", "QueueCapability", "QueueGuarantee", "NoClusterFits",
	"CapacityReserved", "NoReadyCluster", "GangShortfall", "DataNotResolved"}

// Reasons of the job controller's Warnings that keep a job from starting.
var jobControllerReasons = []string{"InvalidPlugin", "FailedCreate"}

// Job explains a job, or a PodGroup alone (Job nil).
func Job(f *Facts) []string {
	var out []string
	subject := ""
	switch {
	case f.Job != nil:
		subject = fmt.Sprintf("Job %s/%s", f.Job.Namespace, f.Job.Name)
		st := f.Job.Status
		phase := string(st.State.Phase)
		if phase == "" {
			phase = "not started by the job controller yet"
		}
		line := fmt.Sprintf("%s is %s", subject, phase)
		if t := st.State.LastTransitionTime.Time; !t.IsZero() && st.State.Phase != "" {
			line += fmt.Sprintf(" (for %s)", duration.HumanDuration(f.Now.Sub(t)))
		}
		if st.State.Message != "" {
			line += ": " + strings.TrimSuffix(st.State.Message, ".")
		}
		out = append(out, line+".")
		out = append(out, fmt.Sprintf("Of its %d pods (%d needed to start), %d are pending, %d running, %d succeeded, %d failed.",
			f.Job.Spec.TotalReplicas(), f.Job.Spec.MinAvailable, st.Pending, st.Running, st.Succeeded, st.Failed))
		if st.RetryCount > 0 {
			out = append(out, fmt.Sprintf("It was restarted %d times (maxRetry %d).", st.RetryCount, f.Job.Spec.MaxRetry))
		}
		if e := latest(f.Events, func(e corev1.Event) bool {
			return e.Type == corev1.EventTypeWarning && slices.Contains(jobControllerReasons, e.Reason) && e.InvolvedObject.Kind == "Job"
		}); e != nil && (st.State.Phase == "" || st.State.Phase == batchv1alpha1.JobPending) {
			out = append(out, fmt.Sprintf("The job controller cannot start it (%s, %s ago): %s.", e.Reason,
				duration.HumanDuration(f.Now.Sub(when(e))), strings.TrimSuffix(e.Message, ".")))
		}
	case f.PodGroup != nil:
		subject = fmt.Sprintf("PodGroup %s/%s", f.PodGroup.Namespace, f.PodGroup.Name)
	}
	if b := f.Binding; b != nil {
		out = append(out, federation(b, f.Events)...)
	}
	if q := f.Queue; q != nil && (q.Status.State == schedulingv1beta1.QueueStateClosed || q.Status.State == schedulingv1beta1.QueueStateClosing) {
		out = append(out, fmt.Sprintf("Its queue %s is %s: no new job is admitted to it.", q.Name, q.Status.State))
	}
	if pg := f.PodGroup; pg != nil {
		out = append(out, podGroup(subject, f, pg)...)
	} else if f.Binding == nil && f.Job != nil && f.Job.Status.State.Phase != batchv1alpha1.JobCompleted {
		out = append(out, "It has no PodGroup yet: the job controller makes one when it starts the job.")
	}
	out = append(out, failedScheduling(f.Events)...)
	return out
}

// federation explains a binding on the Karmada API server: held by
// caldera-global (scheduling suspended, no cluster), placed by it
// (suspended, with a cluster), or handed to Karmada's scheduler.
func federation(b *workv1alpha2.ResourceBinding, events []corev1.Event) []string {
	var clusters []string
	for _, c := range b.Spec.Clusters {
		clusters = append(clusters, c.Name)
	}
	var out []string
	switch {
	case len(clusters) > 0 && b.Spec.SchedulingSuspended():
		out = append(out, fmt.Sprintf("caldera-global placed it in %s.", strings.Join(clusters, ", ")))
	case len(clusters) > 0:
		out = append(out, fmt.Sprintf("caldera-global released it; Karmada placed it in %s.", strings.Join(clusters, ", ")))
	case !b.Spec.SchedulingSuspended():
		return []string{"caldera-global released it; Karmada has not placed it in a member yet."}
	default:
		if e := latest(events, func(e corev1.Event) bool { return slices.Contains(holdReasons, e.Reason) }); e != nil {
			return []string{fmt.Sprintf("caldera-global holds it (%s): %s.", e.Reason, strings.TrimSuffix(strings.TrimPrefix(e.Message, "held: "), "."))}
		}
		return []string{"caldera-global holds it: it has not decided on it yet."}
	}
	for _, s := range b.Status.AggregatedStatus {
		if !s.Applied && s.AppliedMessage != "" {
			out = append(out, fmt.Sprintf("%s has not accepted it: %s.", s.ClusterName, strings.TrimSuffix(s.AppliedMessage, ".")))
		}
	}
	return out
}

// podGroup explains what the scheduler concluded.
func podGroup(subject string, f *Facts, pg *schedulingv1beta1.PodGroup) []string {
	var out []string
	if f.Job == nil {
		out = append(out, fmt.Sprintf("%s is %s, in queue %s; it needs %d pods placed together.", subject, orUnknown(string(pg.Status.Phase)), orDefault(pg.Spec.Queue), pg.Spec.MinMember))
	}
	blocked := false
	for _, c := range pg.Status.Conditions {
		if c.Type == schedulingv1beta1.PodGroupUnschedulableType && c.Status == corev1.ConditionTrue {
			blocked = true
			out = append(out, fmt.Sprintf("The scheduler cannot place it (%s, for %s): %s.", c.Reason, duration.HumanDuration(f.Now.Sub(c.LastTransitionTime.Time)), strings.TrimSuffix(c.Message, ".")))
		}
	}
	switch pg.Status.Phase {
	case schedulingv1beta1.PodGroupPending, "":
		if !blocked {
			out = append(out, fmt.Sprintf("The scheduler has not admitted it to queue %s yet.", orDefault(pg.Spec.Queue)))
		}
	case schedulingv1beta1.PodGroupRunning:
		out = append(out, fmt.Sprintf("The scheduler placed its gang: %d pods running, %d succeeded.", pg.Status.Running, pg.Status.Succeeded))
	}
	return out
}

// failedScheduling sums up the pods' FailedScheduling events: how many
// pods, and the latest message.
func failedScheduling(events []corev1.Event) []string {
	pods := map[string]bool{}
	for _, e := range events {
		if e.Reason == "FailedScheduling" && e.InvolvedObject.Kind == "Pod" {
			pods[e.InvolvedObject.Name] = true
		}
	}
	if len(pods) == 0 {
		return nil
	}
	e := latest(events, func(e corev1.Event) bool { return e.Reason == "FailedScheduling" && e.InvolvedObject.Kind == "Pod" })
	return []string{fmt.Sprintf("%d of its pods were not scheduled; the latest says: %s.", len(pods), strings.TrimSuffix(e.Message, "."))}
}

// latest is the most recent event that match accepts.
func latest(events []corev1.Event, match func(corev1.Event) bool) *corev1.Event {
	var best *corev1.Event
	for i := range events {
		e := &events[i]
		if match(*e) && (best == nil || when(e).After(when(best))) {
			best = e
		}
	}
	return best
}

func when(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func orUnknown(s string) string {
	if s == "" {
		return "Unknown"
	}
	return s
}

func orDefault(q string) string {
	if q == "" {
		return schedulingv1beta1.DefaultQueue
	}
	return q
}

// HyperJob explains a HyperJob from its status and its children's facts.
func HyperJob(now time.Time, hj *trainingv1alpha1.HyperJob, children []*Facts) []string {
	out := []string{fmt.Sprintf("HyperJob %s/%s is %s.", hj.Namespace, hj.Name, orPending(string(hj.Status.Phase)))}
	if c := meta.FindStatusCondition(hj.Status.Conditions, "Planned"); c != nil {
		switch {
		case c.Status == "True":
			out = append(out, fmt.Sprintf("It is planned as %s.", c.Message))
		default:
			out = append(out, fmt.Sprintf("It is not planned (%s, for %s): %s.", c.Reason, duration.HumanDuration(now.Sub(c.LastTransitionTime.Time)), strings.TrimSuffix(c.Message, ".")))
		}
	}
	for _, rs := range hj.Status.ReplicatedJobsStatus {
		names := make([]string, 0, len(rs.JobClusters))
		for n := range rs.JobClusters {
			names = append(names, n)
		}
		slices.Sort(names)
		var parts []string
		for _, n := range names {
			state := orPending(string(rs.JobStates[n].Phase))
			parts = append(parts, fmt.Sprintf("%s in %s (%s)", n, rs.JobClusters[n], state))
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("Replicated job %s: %s; pods %d pending, %d running, %d succeeded, %d failed.",
				rs.Name, strings.Join(parts, ", "), rs.Pending, rs.Running, rs.Succeeded, rs.Failed))
		}
	}
	for _, typ := range []string{trainingv1alpha1.HyperJobCompleted, trainingv1alpha1.HyperJobFailed} {
		if c := meta.FindStatusCondition(hj.Status.Conditions, typ); c != nil && c.Status == "True" {
			out = append(out, fmt.Sprintf("%s: %s.", typ, strings.TrimSuffix(c.Message, ".")))
		}
	}
	for _, f := range children {
		if f.Job == nil || f.Job.Status.State.Phase == batchv1alpha1.JobRunning || f.Job.Status.State.Phase == batchv1alpha1.JobCompleted {
			continue
		}
		for _, line := range Job(f) {
			out = append(out, "  "+line)
		}
	}
	return out
}

func orPending(s string) string {
	if s == "" {
		return "Pending"
	}
	return s
}
