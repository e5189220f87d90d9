package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
)

func TestValidateCronJob(t *testing.T) {
	cronJob := func(name, schedule string, mutate func(*batchv1alpha1.CronJobSpec)) *batchv1alpha1.CronJob {
		cj := &batchv1alpha1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: batchv1alpha1.CronJobSpec{
			Schedule:    schedule,
			JobTemplate: batchv1alpha1.JobTemplateSpec{Spec: testingbatch.MakeJob("", "").Task(testingbatch.MakeTask("w", 2)).Obj().Spec},
		}}
		if mutate != nil {
			mutate(&cj.Spec)
		}
		batchv1alpha1.SetDefaults_CronJob(cj)
		return cj
	}
	for _, tc := range []struct {
		name string
		cj   *batchv1alpha1.CronJob
		want string
	}{
		{"every five minutes", cronJob("nightly", "*/5 * * * *", nil), ""},
		{"a descriptor in a time zone", cronJob("nightly", "@daily", func(s *batchv1alpha1.CronJobSpec) { s.TimeZone = new("Asia/Shanghai") }), ""},
		{"four fields", cronJob("nightly", "*/5 * * *", nil), `spec.schedule: Invalid value: "*/5 * * *": expected exactly 5 fields, found 4: [*/5 * * *]`},
		{"a time zone in the schedule", cronJob("nightly", "TZ=UTC 0 2 * * *", nil), `spec.schedule: Invalid value: "TZ=UTC 0 2 * * *": a time zone in the schedule is not supported: set spec.timeZone`},
		{"an unknown time zone", cronJob("nightly", "0 2 * * *", func(s *batchv1alpha1.CronJobSpec) { s.TimeZone = new("Mars/Olympus") }),
			`spec.timeZone: Invalid value: "Mars/Olympus": not a time zone of the IANA database (e.g. Europe/Berlin, UTC)`},
		{"an unknown policy", cronJob("nightly", "0 2 * * *", func(s *batchv1alpha1.CronJobSpec) { s.ConcurrencyPolicy = "Queue" }),
			`spec.concurrencyPolicy: Unsupported value: "Queue": supported values: "Allow", "Forbid", "Replace"`},
		{"negative numbers", cronJob("nightly", "0 2 * * *", func(s *batchv1alpha1.CronJobSpec) {
			s.StartingDeadlineSeconds, s.FailedJobsHistoryLimit = new(int64(-1)), new(int32(-2))
		}), `spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0; spec.failedJobsHistoryLimit: Invalid value: -2: must be greater than or equal to 0`},
		{"a name with no room for its jobs'", cronJob(strings.Repeat("a", 53), "0 2 * * *", nil), `metadata.name: Too long: may not be more than 52 bytes; spec.jobTemplate.spec.tasks[0].name: Invalid value: "w": pod name "` + strings.Repeat("a", 53) + `-99999999-w-1" (<job>-<task>-<index>) is invalid: name part must be no more than 63 bytes`},
		{"an invalid template", cronJob("nightly", "0 2 * * *", func(s *batchv1alpha1.CronJobSpec) {
			s.JobTemplate.Spec.Tasks[0].DependsOn = &batchv1alpha1.DependsOn{Name: []string{"nope"}}
		}),
			`spec.jobTemplate.spec.tasks[0].dependsOn.name[0]: Not found: "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range ValidateCronJob(tc.cj) {
				got = append(got, e.Error())
			}
			if g := strings.Join(got, "; "); g != tc.want {
				t.Errorf("got  %s\nwant %s", g, tc.want)
			}
		})
	}
}
