package webhook_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	testingtraining "github.com/caldera-sh/caldera/apis/training/v1alpha1/testing"
	"github.com/caldera-sh/caldera/pkg/hyperjob/webhook"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

func TestDefault(t *testing.T) {
	got := testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(
		testingtraining.MakeReplicatedJob("trainer", 0).
			Template(testingbatch.MakeJob("", "").Task(testingbatch.MakeTask("", 2)).Obj().Spec)).Obj()
	if err := webhook.New().Default(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	rj := got.Spec.ReplicatedJobs[0]
	wantTask := testingbatch.MakeTask("default0", 2).MinAvailable(2).MaxRetry(3).Obj()
	// The schema defaults an absent replicas; a 0 reaching the webhook was
	// written, and is left for validation to refuse.
	if diff := cmp.Diff(int32(0), rj.Replicas); diff != "" {
		t.Errorf("replicas (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(wantTask, rj.TemplateSpec.Tasks[0]); diff != "" {
		t.Errorf("template task (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff("default", rj.TemplateSpec.Queue); diff != "" {
		t.Errorf("template queue (-want,+got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	noImage := testingtraining.MakeReplicatedJob("trainer", 1).Obj()
	noImage.TemplateSpec.Tasks[0].Template.Spec.Containers[0].Image = ""
	cases := map[string]struct {
		hj   *trainingv1alpha1.HyperJob
		want []metav1.StatusCause
		// ignoreMessage compares type and field only.
		ignoreMessage bool
	}{
		"valid": {
			hj: testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(
				testingtraining.MakeReplicatedJob("trainer", 2).Clusters("east", "west").
					Request("nvidia.com/gpu", "8").Split(trainingv1alpha1.SplitModeStatic, 16, "nvidia.com/gpu")).Obj(),
		},
		"unknown plugin in a template": {
			hj: testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(
				testingtraining.MakeReplicatedJob("trainer", 1).Template(
					testingbatch.MakeJob("", "").Task(testingbatch.MakeTask("worker", 1)).Plugin("horovod").Obj().Spec)).Obj(),
			want:          []metav1.StatusCause{wt.Cause(wt.NotSupported, "spec.replicatedJobs[0].templateSpec.plugins[horovod]", "")},
			ignoreMessage: true,
		},
		"template pod that cannot be created": {
			hj: func() *trainingv1alpha1.HyperJob {
				hj := testingtraining.MakeHyperJob("llm", "ns").Obj()
				hj.Spec.ReplicatedJobs = []trainingv1alpha1.ReplicatedJob{noImage}
				return hj
			}(),
			want:          []metav1.StatusCause{wt.Cause(wt.Required, "spec.replicatedJobs[0].templateSpec.tasks[0].template.spec.containers[0].image", "")},
			ignoreMessage: true,
		},
		"zero replicas": {
			hj: testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(testingtraining.MakeReplicatedJob("trainer", 0)).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.replicatedJobs[0].replicas",
				"Invalid value: 0: must be at least 1: a replicated job makes at least one child job")},
		},
		"accelerator the template does not request": {
			hj: testingtraining.MakeHyperJob("llm", "ns").ReplicatedJob(
				testingtraining.MakeReplicatedJob("trainer", 1).Split(trainingv1alpha1.SplitModeStatic, 8, "nvidia.com/gpu")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.replicatedJobs[0].splitPolicy.acceleratorType",
				`Invalid value: "nvidia.com/gpu": no container of templateSpec requests this resource, so there is nothing to split`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := webhook.New()
			var opts []cmp.Option
			if tc.ignoreMessage {
				opts = append(opts, wt.IgnoreMessage)
			}
			_, err := w.ValidateCreate(t.Context(), tc.hj)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err), opts...); diff != "" {
				t.Errorf("ValidateCreate causes (-want,+got):\n%s", diff)
			}
			old := tc.hj.DeepCopy()
			old.Spec.MaxDomains = ptr.To[int32](1)
			_, err = w.ValidateUpdate(t.Context(), old, tc.hj)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err), opts...); diff != "" {
				t.Errorf("ValidateUpdate causes (-want,+got):\n%s", diff)
			}
		})
	}
}
