package validation

import (
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
)

// TestExamples decodes every example strictly into the Go type its kind
// names (so a misspelled or unknown field fails here, not only against an
// API server) and checks that it is valid once defaulted.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "datadependency", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no examples found in examples/datadependency")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(data, &meta); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if meta.APIVersion != ddv1alpha1.SchemeGroupVersion.String() {
				t.Fatalf("apiVersion is %q, want %q", meta.APIVersion, ddv1alpha1.SchemeGroupVersion)
			}
			var errs field.ErrorList
			switch meta.Kind {
			case "DataSource":
				var ds ddv1alpha1.DataSource
				if err := yaml.UnmarshalStrict(data, &ds); err != nil {
					t.Fatalf("decoding: %v", err)
				}
				ddv1alpha1.SetDefaults_DataSource(&ds)
				errs = ValidateDataSource(&ds)
			case "DataSourceClaim":
				var dsc ddv1alpha1.DataSourceClaim
				if err := yaml.UnmarshalStrict(data, &dsc); err != nil {
					t.Fatalf("decoding: %v", err)
				}
				if dsc.Namespace == "" {
					dsc.Namespace = metav1.NamespaceDefault // where kubectl puts it
				}
				ddv1alpha1.SetDefaults_DataSourceClaim(&dsc)
				errs = ValidateDataSourceClaim(&dsc)
			default:
				t.Fatalf("unexpected kind %q", meta.Kind)
			}
			if len(errs) > 0 {
				t.Errorf("validation: %v", errs.ToAggregate())
			}
		})
	}
}
