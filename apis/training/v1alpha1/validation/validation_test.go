package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchtesting "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	trainingtesting "github.com/caldera-sh/caldera/apis/training/v1alpha1/testing"
)

// ignoreDetail compares errors by type and field only, so that the tests do
// not pin the wording of messages.
var ignoreDetail = cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail", "Origin", "CoveredByDeclarative")

func TestValidateHyperJob(t *testing.T) {
	rj0 := field.NewPath("spec", "replicatedJobs").Index(0)
	rj1 := field.NewPath("spec", "replicatedJobs").Index(1)
	cases := map[string]struct {
		hj   *trainingv1alpha1.HyperJob
		want field.ErrorList
	}{
		"static clusters and an automatic split": {
			hj: trainingtesting.MakeHyperJob("llm", "ml").MinAvailable(3).
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer-910b", 1).
					Clusters("cluster-ascend-910b-1", "cluster-ascend-910b-2")).
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer-gpu", 2).
					Request("nvidia.com/gpu", "8").
					Split(trainingv1alpha1.SplitModeAuto, 16, "nvidia.com/gpu")).
				Obj(),
		},
		"longest child name is exactly 63 characters": {
			// "llm-" + 57 + "-9" with replicas 10: the highest index is 9.
			// The child name itself fits; the names of its pods cannot.
			hj: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob(strings.Repeat("a", 57), 10)).Obj(),
			want: field.ErrorList{field.Invalid(rj0.Child("templateSpec", "tasks").Index(0).Child("name"), nil, "")},
		},
		"longest child name is 64 characters": {
			// "llm-" + 57 + "-99" with replicas 100: the hundredth child's
			// name is one too long although the first one's would fit.
			hj: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("short", 1)).
				ReplicatedJob(trainingtesting.MakeReplicatedJob(strings.Repeat("a", 57), 100)).Obj(),
			want: field.ErrorList{field.Invalid(rj1.Child("name"), nil, "")},
		},
		"hyperjob name that is not a DNS-1123 label": {
			hj: trainingtesting.MakeHyperJob("llm.v2", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 2)).Obj(),
			want: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), nil, "")},
		},
		"generateName leaves room for the generated suffix": {
			// 41 + 5 generated + "-" + 15 + "-1" = 64.
			hj: trainingtesting.MakeHyperJob("", "ml").GenerateName(strings.Repeat("g", 40) + "-").
				ReplicatedJob(trainingtesting.MakeReplicatedJob(strings.Repeat("a", 15), 2)).Obj(),
			want: field.ErrorList{field.Invalid(rj0.Child("name"), nil, "")},
		},
		"cluster name no cluster can have": {
			hj: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 2).Clusters("cluster-a", "Cluster A")).Obj(),
			want: field.ErrorList{field.Invalid(rj0.Child("clusterNames").Index(1), nil, "")},
		},
		"accelerator type that is not a resource name": {
			hj: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 2).
					Split(trainingv1alpha1.SplitModeStatic, 16, "nvidia.com/gpu/a100")).Obj(),
			want: field.ErrorList{field.Invalid(rj0.Child("splitPolicy", "acceleratorType"), nil, "")},
		},
		"accelerator type the template does not request": {
			hj: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 2).
					Request("amd.com/gpu", "1").
					Split(trainingv1alpha1.SplitModeStatic, 16, "nvidia.com/gpu")).Obj(),
			want: field.ErrorList{field.Invalid(rj0.Child("splitPolicy", "acceleratorType"), nil, "")},
		},
		"template a Volcano Job would not accept": {
			hj: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 2).Template(
					batchtesting.MakeJob("", "").Task(batchtesting.MakeTask("worker", 1).NoContainers()).Obj().Spec)).Obj(),
			want: field.ErrorList{field.Required(rj0.Child("templateSpec", "tasks").Index(0).Child("template", "spec", "containers"), "")},
		},
		"pod names of the last child job too long": {
			// Child "llm-trainer-1" (13) + "-" + 48 + "-0" = 64: the child
			// name fits, the name of its pod does not.
			hj: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 2).Template(
					batchtesting.MakeJob("", "").Task(batchtesting.MakeTask(strings.Repeat("w", 48), 1)).Obj().Spec)).Obj(),
			want: field.ErrorList{field.Invalid(rj0.Child("templateSpec", "tasks").Index(0).Child("name"), nil, "")},
		},
		"split policy without accelerator type": {
			hj: trainingtesting.MakeHyperJob("llm", "ml").
				ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 2).
					Split(trainingv1alpha1.SplitModeAuto, 0, "")).Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hj := tc.hj.DeepCopy()
			trainingv1alpha1.SetDefaults_HyperJob(hj)
			got := ValidateHyperJob(hj)
			if diff := cmp.Diff(tc.want, got, ignoreDetail, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ValidateHyperJob() errors (-want,+got):\n%s", diff)
			}
		})
	}
}
