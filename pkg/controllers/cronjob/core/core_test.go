package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	bt "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
)

var created = time.Date(2026, 12, 1, 10, 0, 30, 0, time.UTC)

func cronJob(schedule string, mutate func(*batchv1alpha1.CronJobSpec)) *batchv1alpha1.CronJob {
	cj := &batchv1alpha1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nightly", UID: "cj-uid", CreationTimestamp: metav1.NewTime(created)},
		Spec: batchv1alpha1.CronJobSpec{Schedule: schedule, JobTemplate: batchv1alpha1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "ml"}},
			Spec:       bt.MakeJob("", "").Task(bt.MakeTask("w", 1)).Obj().Spec,
		}},
	}
	if mutate != nil {
		mutate(&cj.Spec)
	}
	batchv1alpha1.SetDefaults_CronJob(cj)
	return cj
}

// job is a Job of the CronJob's run at t, in a phase ("" is not started).
func job(cj *batchv1alpha1.CronJob, t time.Time, phase batchv1alpha1.JobPhase, ended time.Time) *batchv1alpha1.Job {
	j := jobFor(cj, t)
	j.Status.State = batchv1alpha1.JobState{Phase: phase, LastTransitionTime: metav1.NewTime(ended)}
	return j
}

func at(hour, min int) time.Time { return time.Date(2026, 12, 1, hour, min, 0, 0, time.UTC) }

func names(jobs []*batchv1alpha1.Job) string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return strings.Join(out, ",")
}

func TestDecide(t *testing.T) {
	hourly := cronJob("0 * * * *", nil)
	forbid := cronJob("0 * * * *", func(s *batchv1alpha1.CronJobSpec) { s.ConcurrencyPolicy = batchv1alpha1.ForbidConcurrent })
	replace := cronJob("0 * * * *", func(s *batchv1alpha1.CronJobSpec) { s.ConcurrencyPolicy = batchv1alpha1.ReplaceConcurrent })
	deadline := cronJob("0 * * * *", func(s *batchv1alpha1.CronJobSpec) { s.StartingDeadlineSeconds = new(int64(60)) })
	suspended := cronJob("0 * * * *", func(s *batchv1alpha1.CronJobSpec) { s.Suspend = new(true) })
	berlin := cronJob("0 12 * * *", func(s *batchv1alpha1.CronJobSpec) { s.TimeZone = new("Europe/Berlin") })
	ran := func(cj *batchv1alpha1.CronJob, t time.Time) *batchv1alpha1.CronJob {
		c := cj.DeepCopy()
		c.Status.LastScheduleTime = &metav1.Time{Time: t}
		return c
	}
	for _, tc := range []struct {
		name           string
		cj             *batchv1alpha1.CronJob
		jobs           []*batchv1alpha1.Job
		now            time.Time
		create, delete string
		active, events string
		lastSchedule   time.Time
		requeue        time.Duration
	}{
		{name: "nothing due before the first time", cj: hourly, now: at(10, 59),
			requeue: time.Minute},
		{name: "the first run at its time", cj: hourly, now: at(11, 0),
			create: "nightly-29935380", active: "nightly-29935380", lastSchedule: at(11, 0), requeue: time.Hour,
			events: "SuccessfulCreate: created job nightly-29935380 for the run scheduled at 2026-12-01T11:00:00Z"},
		{name: "a run already started is not started again", cj: ran(hourly, at(11, 0)), now: at(11, 30),
			jobs:   []*batchv1alpha1.Job{job(hourly, at(11, 0), batchv1alpha1.JobRunning, at(11, 1))},
			active: "nightly-29935380", lastSchedule: at(11, 0), requeue: 30 * time.Minute},
		{name: "after missed runs, only the latest", cj: hourly, now: at(15, 10),
			create: "nightly-29935620", active: "nightly-29935620", lastSchedule: at(15, 0), requeue: 50 * time.Minute,
			events: "SuccessfulCreate: created job nightly-29935620 for the run scheduled at 2026-12-01T15:00:00Z"},
		{name: "Allow runs beside an active job", cj: ran(hourly, at(11, 0)), now: at(12, 0),
			jobs:   []*batchv1alpha1.Job{job(hourly, at(11, 0), batchv1alpha1.JobRunning, at(11, 1))},
			create: "nightly-29935440", active: "nightly-29935380,nightly-29935440", lastSchedule: at(12, 0), requeue: time.Hour,
			events: "SuccessfulCreate: created job nightly-29935440 for the run scheduled at 2026-12-01T12:00:00Z"},
		{name: "Forbid waits for the active job", cj: ran(forbid, at(11, 0)), now: at(12, 0),
			jobs:   []*batchv1alpha1.Job{job(forbid, at(11, 0), batchv1alpha1.JobRunning, at(11, 1))},
			active: "nightly-29935380", lastSchedule: at(11, 0), requeue: time.Hour,
			events: "JobAlreadyActive: the run scheduled at 2026-12-01T12:00:00Z waits: concurrencyPolicy Forbid and nightly-29935380 has not finished"},
		{name: "Forbid starts the waiting run once the job is done", cj: ran(forbid, at(11, 0)), now: at(12, 20),
			jobs:   []*batchv1alpha1.Job{job(forbid, at(11, 0), batchv1alpha1.JobCompleted, at(12, 15))},
			create: "nightly-29935440", active: "nightly-29935440", lastSchedule: at(12, 0), requeue: 40 * time.Minute,
			events: "SuccessfulCreate: created job nightly-29935440 for the run scheduled at 2026-12-01T12:00:00Z"},
		{name: "Replace deletes the active job", cj: ran(replace, at(11, 0)), now: at(12, 0),
			jobs:   []*batchv1alpha1.Job{job(replace, at(11, 0), batchv1alpha1.JobPending, at(11, 1))},
			create: "nightly-29935440", delete: "nightly-29935380", active: "nightly-29935440", lastSchedule: at(12, 0), requeue: time.Hour,
			events: "SuccessfulDelete: deleted job nightly-29935380, replaced by the run scheduled at 2026-12-01T12:00:00Z; SuccessfulCreate: created job nightly-29935440 for the run scheduled at 2026-12-01T12:00:00Z"},
		{name: "a run past its starting deadline is skipped", cj: ran(deadline, at(11, 0)), now: at(12, 5),
			lastSchedule: at(12, 0), requeue: 55 * time.Minute,
			events: "MissedSchedule: the run scheduled at 2026-12-01T12:00:00Z was not started within startingDeadlineSeconds (60s)"},
		{name: "a run within its starting deadline starts", cj: ran(deadline, at(11, 0)), now: at(12, 0).Add(59 * time.Second),
			create: "nightly-29935440", active: "nightly-29935440", lastSchedule: at(12, 0), requeue: 59*time.Minute + time.Second,
			events: "SuccessfulCreate: created job nightly-29935440 for the run scheduled at 2026-12-01T12:00:00Z"},
		{name: "a run created before a restart, its status not written, is recorded", cj: ran(replace, at(11, 0)), now: at(12, 1),
			jobs:   []*batchv1alpha1.Job{job(replace, at(11, 0), batchv1alpha1.JobCompleted, at(11, 30)), job(replace, at(12, 0), batchv1alpha1.JobPending, at(12, 0))},
			active: "nightly-29935440", lastSchedule: at(12, 0), requeue: 59 * time.Minute},
		{name: "suspended, nothing starts", cj: suspended, now: at(12, 0), requeue: time.Hour},
		{name: "the schedule is read in its time zone", cj: berlin, now: at(11, 0),
			create: "nightly-29935380", active: "nightly-29935380", lastSchedule: at(11, 0), requeue: 24 * time.Hour,
			events: "SuccessfulCreate: created job nightly-29935380 for the run scheduled at 2026-12-01T11:00:00Z"},
		{name: "history beyond the limits goes, oldest first", cj: ran(hourly, at(15, 0)), now: at(15, 30),
			jobs: []*batchv1alpha1.Job{
				job(hourly, at(11, 0), batchv1alpha1.JobCompleted, at(11, 5)), job(hourly, at(12, 0), batchv1alpha1.JobFailed, at(12, 5)),
				job(hourly, at(13, 0), batchv1alpha1.JobCompleted, at(13, 5)), job(hourly, at(14, 0), batchv1alpha1.JobAborted, at(14, 5)),
				job(hourly, at(15, 0), batchv1alpha1.JobCompleted, at(15, 5)), job(hourly, at(10, 0), batchv1alpha1.JobCompleted, at(10, 5)),
			},
			delete: "nightly-29935320,nightly-29935440", lastSchedule: at(15, 0), requeue: 30 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{CronJob: tc.cj, Jobs: tc.jobs, Now: tc.now})
			create := ""
			if d.Create != nil {
				create = d.Create.Name
			}
			var active []string
			for _, a := range d.Status.Active {
				active = append(active, a.Name)
			}
			var events []string
			for _, e := range d.Events {
				events = append(events, e.Reason+": "+e.Message)
			}
			var last time.Time
			if d.Status.LastScheduleTime != nil {
				last = d.Status.LastScheduleTime.Time
			}
			got := fmt.Sprintf("create %q delete %q active %q last %s requeue %s events %q", create, names(d.Delete), strings.Join(active, ","), last.Format(time.RFC3339), d.RequeueAfter, strings.Join(events, "; "))
			want := fmt.Sprintf("create %q delete %q active %q last %s requeue %s events %q", tc.create, tc.delete, tc.active, tc.lastSchedule.Format(time.RFC3339), tc.requeue, tc.events)
			if got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestTheJobOfARun(t *testing.T) {
	cj := cronJob("0 * * * *", nil)
	d := Decide(Input{CronJob: cj, Now: at(11, 0)})
	j := d.Create
	if j.Labels["team"] != "ml" || j.Annotations[ScheduledTimeAnnotation] != "2026-12-01T11:00:00Z" {
		t.Errorf("labels %v annotations %v", j.Labels, j.Annotations)
	}
	if len(j.OwnerReferences) != 1 || j.OwnerReferences[0].Kind != "CronJob" || j.OwnerReferences[0].UID != "cj-uid" || !*j.OwnerReferences[0].Controller {
		t.Errorf("owner %v", j.OwnerReferences)
	}
	if len(j.Spec.Tasks) != 1 || j.Spec.Queue != "default" {
		t.Errorf("spec %+v", j.Spec)
	}
}

func TestLongDowntimeFindsTheLatestRun(t *testing.T) {
	cj := cronJob("* * * * *", nil)
	now := created.Add(30 * 24 * time.Hour).Add(17 * time.Second)
	d := Decide(Input{CronJob: cj, Now: now})
	if want := now.Truncate(time.Minute); d.Status.LastScheduleTime == nil || !d.Status.LastScheduleTime.Time.Equal(want) {
		t.Errorf("last schedule %v, want %v", d.Status.LastScheduleTime, want)
	}
	if len(d.Events) != 2 || d.Events[0].Reason != "TooManyMissedTimes" {
		t.Errorf("events %v", d.Events)
	}
}
