package v1alpha1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	trainingtesting "github.com/caldera-sh/caldera/apis/training/v1alpha1/testing"
)

// defaultedTemplate is the template of MakeReplicatedJob as a Volcano Job's
// admission leaves it.
func defaultedTemplate() batchv1alpha1.JobSpec {
	job := batchv1alpha1.Job{Spec: trainingtesting.MakeReplicatedJob("x", 1).Obj().TemplateSpec}
	batchv1alpha1.SetDefaults_Job(&job)
	return job.Spec
}

func TestSetDefaults_HyperJob(t *testing.T) {
	cases := map[string]struct {
		in   *trainingv1alpha1.HyperJob
		want *trainingv1alpha1.HyperJob
	}{
		"replicas, split mode and template filled in": {
			in: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 0).Split("", 16, "nvidia.com/gpu")).Obj(),
			want: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 1).
					Split(trainingv1alpha1.SplitModeStatic, 16, "nvidia.com/gpu").
					Template(defaultedTemplate())).Obj(),
		},
		"set values kept": {
			in: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 3).
					Split(trainingv1alpha1.SplitModeAuto, 16, "nvidia.com/gpu")).Obj(),
			want: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 3).
					Split(trainingv1alpha1.SplitModeAuto, 16, "nvidia.com/gpu").
					Template(defaultedTemplate())).Obj(),
		},
		"no split policy stays without one": {
			in: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 2)).Obj(),
			want: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 2).Template(defaultedTemplate())).Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			trainingv1alpha1.SetDefaults_HyperJob(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SetDefaults_HyperJob() (-want,+got):\n%s", diff)
			}
			again := got.DeepCopy()
			trainingv1alpha1.SetDefaults_HyperJob(again)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("SetDefaults_HyperJob() is not idempotent (-first,+second):\n%s", diff)
			}
		})
	}
}
