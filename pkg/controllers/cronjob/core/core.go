// Package core decides what a CronJob needs now, from the CronJob, the Jobs
// it owns and the time: the run to start (if one is due), the Jobs to
// delete (replaced, or beyond the history limits), its status and when to
// look again. It reads nothing else and writes nothing; the controller in
// the parent package carries the decision out.
package core

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	"github.com/caldera-sh/caldera/apis/batch/v1alpha1/validation"
)

// ScheduledTimeAnnotation holds, on a Job a CronJob created, the time the
// run was scheduled for (RFC 3339).
const ScheduledTimeAnnotation = "batch.caldera.sh/cronjob-scheduled-time"

// maxMissed bounds the search for the latest missed run: a CronJob whose
// controller was down long with a schedule of every minute has its latest
// run found without walking every minute since.
const maxMissed = 100

// Input is what the decision reads.
type Input struct {
	CronJob *batchv1alpha1.CronJob
	// Jobs are the Jobs the CronJob owns.
	Jobs []*batchv1alpha1.Job
	Now  time.Time
}

// Event is a Kubernetes event for the CronJob.
type Event struct {
	Type, Reason, Message string
}

// Decision is what the CronJob needs.
type Decision struct {
	// Create is the Job of the run due now; nil when none is.
	Create *batchv1alpha1.Job
	// Delete are Jobs to delete: active ones a Replace run replaces, and
	// finished ones beyond the history limits, oldest first.
	Delete []*batchv1alpha1.Job
	// Status is the CronJob's status after the decision is carried out.
	Status batchv1alpha1.CronJobStatus
	// RequeueAfter is when the next run is due; 0 when none ever is.
	RequeueAfter time.Duration
	Events       []Event
}

// Finished reports whether a Job has ended: Completed, Failed, Terminated
// or Aborted (an aborted Job holds no pods until resumed).
func Finished(j *batchv1alpha1.Job) bool {
	switch j.Status.State.Phase {
	case batchv1alpha1.JobCompleted, batchv1alpha1.JobFailed, batchv1alpha1.JobTerminated, batchv1alpha1.JobAborted:
		return true
	}
	return false
}

// JobName is the name of the Job of the run scheduled at t: the CronJob's
// name and the minutes since 1970, so that a run is created once however
// often the controller restarts.
func JobName(cj *batchv1alpha1.CronJob, t time.Time) string {
	return cj.Name + "-" + strconv.FormatInt(t.Unix()/60, 10)
}

// scheduledTime is when a Job's run was scheduled: its annotation, or its
// creation time.
func scheduledTime(j *batchv1alpha1.Job) time.Time {
	if t, err := time.Parse(time.RFC3339, j.Annotations[ScheduledTimeAnnotation]); err == nil {
		return t
	}
	return j.CreationTimestamp.Time
}

// Decide decides what the CronJob needs at in.Now.
func Decide(in Input) Decision {
	cj := in.CronJob
	var d Decision
	jobs := slices.Clone(in.Jobs)
	slices.SortFunc(jobs, func(a, b *batchv1alpha1.Job) int { return scheduledTime(a).Compare(scheduledTime(b)) })
	var active []*batchv1alpha1.Job
	st := *cj.Status.DeepCopy()
	for _, j := range jobs {
		if !Finished(j) {
			active = append(active, j)
			continue
		}
		if j.Status.State.Phase == batchv1alpha1.JobCompleted {
			done := j.Status.State.LastTransitionTime
			if st.LastSuccessfulTime == nil || st.LastSuccessfulTime.Before(&done) {
				st.LastSuccessfulTime = done.DeepCopy()
			}
		}
	}

	tz := ptr.Deref(cj.Spec.TimeZone, "")
	sched, err := validation.ParseSchedule(cj.Spec.Schedule, tz)
	if err != nil {
		// Admission refuses such a schedule; one stored before it was
		// checked is said, and nothing runs.
		d.Events = append(d.Events, Event{corev1.EventTypeWarning, "UnparseableSchedule", fmt.Sprintf("spec.schedule %q: %v", cj.Spec.Schedule, err)})
		d.Delete = prune(cj, jobs)
		d.Status = status(st, active, d.Delete)
		return d
	}
	since := cj.CreationTimestamp.Time
	if st.LastScheduleTime != nil {
		since = st.LastScheduleTime.Time
	}
	due, missed := latestDue(sched, since, in.Now)
	next := sched.Next(in.Now)
	d.RequeueAfter = next.Sub(in.Now)
	if !next.After(in.Now) {
		d.RequeueAfter = 0
	}

	switch {
	case due.IsZero() || ptr.Deref(cj.Spec.Suspend, false):
	case slices.ContainsFunc(jobs, func(j *batchv1alpha1.Job) bool { return j.Name == JobName(cj, due) }):
		// Created already, and the status not written after (a restart
		// in between): the run is recorded, not started twice.
		st.LastScheduleTime = &metav1.Time{Time: due}
	case tooLate(cj, due, in.Now):
		// Skipped for good: the next run is looked for from here on.
		d.Events = append(d.Events, Event{corev1.EventTypeWarning, "MissedSchedule",
			fmt.Sprintf("the run scheduled at %s was not started within startingDeadlineSeconds (%ds)", due.Format(time.RFC3339), *cj.Spec.StartingDeadlineSeconds)})
		st.LastScheduleTime = &metav1.Time{Time: due}
	case len(active) > 0 && cj.Spec.ConcurrencyPolicy == batchv1alpha1.ForbidConcurrent:
		// Waits for the active Jobs to finish: their end brings the
		// CronJob back, and the run starts then if its deadline allows.
		d.Events = append(d.Events, Event{corev1.EventTypeNormal, "JobAlreadyActive",
			fmt.Sprintf("the run scheduled at %s waits: concurrencyPolicy Forbid and %s has not finished", due.Format(time.RFC3339), active[0].Name)})
	default:
		if missed > maxMissed {
			d.Events = append(d.Events, Event{corev1.EventTypeWarning, "TooManyMissedTimes",
				fmt.Sprintf("more than %d runs were missed since %s; starting only the latest", maxMissed, since.Format(time.RFC3339))})
		}
		if cj.Spec.ConcurrencyPolicy == batchv1alpha1.ReplaceConcurrent {
			for _, j := range active {
				d.Delete = append(d.Delete, j)
				d.Events = append(d.Events, Event{corev1.EventTypeNormal, "SuccessfulDelete", fmt.Sprintf("deleted job %s, replaced by the run scheduled at %s", j.Name, due.Format(time.RFC3339))})
			}
		}
		d.Create = jobFor(cj, due)
		d.Events = append(d.Events, Event{corev1.EventTypeNormal, "SuccessfulCreate", fmt.Sprintf("created job %s for the run scheduled at %s", d.Create.Name, due.Format(time.RFC3339))})
		st.LastScheduleTime = &metav1.Time{Time: due}
		active = append(active, d.Create)
	}
	d.Delete = append(d.Delete, prune(cj, jobs)...)
	d.Status = status(st, active, d.Delete)
	return d
}

// latestDue returns the latest scheduled time in (since, now], zero when
// there is none, and how many there were, counted up to maxMissed+1.
func latestDue(sched interface{ Next(time.Time) time.Time }, since, now time.Time) (time.Time, int) {
	var latest time.Time
	n := 0
	for t := sched.Next(since); !t.After(now); t = sched.Next(t) {
		latest = t
		if n++; n > maxMissed {
			break
		}
	}
	if n <= maxMissed {
		return latest, n
	}
	// Too many to walk: find the shortest window before now, doubling from
	// a minute, that holds a scheduled time, and take its latest.
	for w := time.Minute; ; w *= 2 {
		from := now.Add(-w)
		if from.Before(latest) {
			from = latest
		}
		if t := sched.Next(from); !t.After(now) {
			for ; !t.After(now); t = sched.Next(t) {
				latest = t
			}
			return latest, n
		}
		if from.Equal(latest) {
			return latest, n
		}
	}
}

func tooLate(cj *batchv1alpha1.CronJob, due, now time.Time) bool {
	d := cj.Spec.StartingDeadlineSeconds
	return d != nil && now.Sub(due) > time.Duration(*d)*time.Second
}

// jobFor is the Job of the run scheduled at t.
func jobFor(cj *batchv1alpha1.CronJob, t time.Time) *batchv1alpha1.Job {
	tmpl := cj.Spec.JobTemplate.DeepCopy()
	j := &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   cj.Namespace,
			Name:        JobName(cj, t),
			Labels:      tmpl.Labels,
			Annotations: tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: batchv1alpha1.SchemeGroupVersion.String(), Kind: "CronJob", Name: cj.Name, UID: cj.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: tmpl.Spec,
	}
	if j.Annotations == nil {
		j.Annotations = map[string]string{}
	}
	j.Annotations[ScheduledTimeAnnotation] = t.UTC().Format(time.RFC3339)
	return j
}

// prune returns the finished Jobs beyond the history limits, oldest first.
func prune(cj *batchv1alpha1.CronJob, jobs []*batchv1alpha1.Job) []*batchv1alpha1.Job {
	var succeeded, failed []*batchv1alpha1.Job
	for _, j := range jobs {
		switch {
		case !Finished(j):
		case j.Status.State.Phase == batchv1alpha1.JobCompleted:
			succeeded = append(succeeded, j)
		default:
			failed = append(failed, j)
		}
	}
	var out []*batchv1alpha1.Job
	for _, h := range []struct {
		jobs  []*batchv1alpha1.Job
		limit *int32
		def   int32
	}{{succeeded, cj.Spec.SuccessfulJobsHistoryLimit, batchv1alpha1.DefaultSuccessfulJobsHistoryLimit}, {failed, cj.Spec.FailedJobsHistoryLimit, batchv1alpha1.DefaultFailedJobsHistoryLimit}} {
		if extra := len(h.jobs) - int(ptr.Deref(h.limit, h.def)); extra > 0 {
			out = append(out, h.jobs[:extra]...)
		}
	}
	return out
}

// status lists the active Jobs not being deleted.
func status(st batchv1alpha1.CronJobStatus, active, deleted []*batchv1alpha1.Job) batchv1alpha1.CronJobStatus {
	st.Active = nil
	for _, j := range active {
		if slices.Contains(deleted, j) {
			continue
		}
		st.Active = append(st.Active, corev1.ObjectReference{
			APIVersion: batchv1alpha1.SchemeGroupVersion.String(), Kind: "Job", Namespace: j.Namespace, Name: j.Name, UID: j.UID,
		})
	}
	return st
}
