package validation

import (
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// TestExamples decodes every example strictly into the Go types (so a
// misspelled or unknown field fails here, not only against an API server)
// and checks that it is valid once defaulted.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "batch", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no examples found in examples/batch")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(data, &meta); err != nil {
				t.Fatal(err)
			}
			if meta.GroupVersionKind() != batchv1alpha1.SchemeGroupVersion.WithKind("Job") {
				t.Skipf("%s is a %s, not a Job", filepath.Base(file), meta.Kind)
			}
			var job batchv1alpha1.Job
			if err := yaml.UnmarshalStrict(data, &job); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if got, want := job.GroupVersionKind(), batchv1alpha1.SchemeGroupVersion.WithKind("Job"); got != want {
				t.Fatalf("kind is %v, want %v", got, want)
			}
			batchv1alpha1.SetDefaults_Job(&job)
			if errs := ValidateJob(&job); len(errs) > 0 {
				t.Errorf("ValidateJob: %v", errs.ToAggregate())
			}
		})
	}
}
