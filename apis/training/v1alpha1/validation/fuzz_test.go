package validation_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	testingtraining "github.com/caldera-sh/caldera/apis/training/v1alpha1/testing"
	"github.com/caldera-sh/caldera/apis/training/v1alpha1/validation"
)

func summary(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field+": "+e.Detail)
	}
	return out
}

// FuzzValidateHyperJob decodes a HyperJob, defaults it and validates it:
// nothing panics, defaulting is idempotent and validation deterministic.
func FuzzValidateHyperJob(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "training", "hyperjob.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	example, err := yaml.YAMLToJSON(data)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	built, err := json.Marshal(testingtraining.MakeHyperJob("llm", "ns").GenerateName("llm-").
		ReplicatedJob(testingtraining.MakeReplicatedJob("a", 0).Clusters("East_1").
			Split(trainingv1alpha1.SplitModeAuto, 4, "nvidia.com/gpu").
			Template(testingbatch.MakeJob("", "").Task(testingbatch.MakeTask("", 2)).Obj().Spec)).Obj())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(built)
	f.Fuzz(func(t *testing.T, data []byte) {
		var hj trainingv1alpha1.HyperJob
		if err := json.Unmarshal(data, &hj); err != nil {
			return
		}
		trainingv1alpha1.SetDefaults_HyperJob(&hj)
		again := hj.DeepCopy()
		trainingv1alpha1.SetDefaults_HyperJob(again)
		if !apiequality.Semantic.DeepEqual(&hj, again) {
			t.Fatalf("SetDefaults_HyperJob is not idempotent:\nonce:  %+v\ntwice: %+v", hj.Spec, again.Spec)
		}
		first := summary(validation.ValidateHyperJob(&hj))
		second := summary(validation.ValidateHyperJob(hj.DeepCopy()))
		if len(first) != len(second) {
			t.Fatalf("ValidateHyperJob is not deterministic:\n%q\n%q", first, second)
		}
		for i := range first {
			if first[i] != second[i] {
				t.Fatalf("ValidateHyperJob is not deterministic:\n%q\n%q", first, second)
			}
		}
	})
}
