package validation

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
)

// TestExamples decodes every example strictly into the Go types (so a
// misspelled or unknown field fails here, not only against an API server)
// and checks that it is valid once defaulted.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "training", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no examples found in examples/training")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var hj trainingv1alpha1.HyperJob
			if err := yaml.UnmarshalStrict(data, &hj); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if got, want := hj.GroupVersionKind(), trainingv1alpha1.SchemeGroupVersion.WithKind("HyperJob"); got != want {
				t.Fatalf("kind is %v, want %v", got, want)
			}
			trainingv1alpha1.SetDefaults_HyperJob(&hj)
			if errs := ValidateHyperJob(&hj); len(errs) > 0 {
				t.Errorf("ValidateHyperJob: %v", errs.ToAggregate())
			}
		})
	}
}
