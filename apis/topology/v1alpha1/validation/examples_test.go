package validation

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
)

// TestExamples decodes every example strictly into the Go types (so a
// misspelled or unknown field fails here, not only against an API server)
// and checks that it is valid.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "topology", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no examples found in examples/topology")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var hn topologyv1alpha1.HyperNode
			if err := yaml.UnmarshalStrict(data, &hn); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if got, want := hn.GroupVersionKind(), topologyv1alpha1.SchemeGroupVersion.WithKind("HyperNode"); got != want {
				t.Fatalf("kind is %v, want %v", got, want)
			}
			if errs := ValidateHyperNode(&hn); len(errs) > 0 {
				t.Errorf("ValidateHyperNode: %v", errs.ToAggregate())
			}
		})
	}
}
