package cronjob

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	bt "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
)

func TestValidate(t *testing.T) {
	cj := func(schedule string, plugins map[string][]string) *batchv1alpha1.CronJob {
		spec := bt.MakeJob("", "").Task(bt.MakeTask("w", 2)).Obj().Spec
		spec.Plugins = plugins
		return &batchv1alpha1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nightly"},
			Spec: batchv1alpha1.CronJobSpec{Schedule: schedule, JobTemplate: batchv1alpha1.JobTemplateSpec{Spec: spec}}}
	}
	for _, tc := range []struct {
		name string
		cj   *batchv1alpha1.CronJob
		want string
	}{
		{"valid", cj("@hourly", map[string][]string{"env": {}}), ""},
		{"a bad schedule and a bad plugin flag, both said", cj("61 * * * *", map[string][]string{"svc": {"--nope"}}),
			`CronJob.batch.volcano.sh "nightly" is invalid: [spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61, spec.jobTemplate.spec.plugins[svc]: Invalid value: ["--nope"]: flag provided but not defined: -nope]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Webhook.ValidateCreate(t.Context(), tc.cj)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	d := cj("@hourly", nil)
	if err := Webhook.Default(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if d.Spec.ConcurrencyPolicy != batchv1alpha1.AllowConcurrent || *d.Spec.SuccessfulJobsHistoryLimit != 3 || d.Spec.JobTemplate.Spec.Queue != "default" ||
		!strings.HasPrefix(d.Spec.JobTemplate.Spec.SchedulerName, "volcano") {
		t.Errorf("defaults: %+v", d.Spec)
	}
}
