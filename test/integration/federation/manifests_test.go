//go:build integration

package federation

import (
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/caldera-sh/caldera/deploy/global"
)

// TestGlobalManifests stores each manifest of deploy/global in the API
// server (with the Karmada mirror's CRDs) and reads it back unchanged.
func TestGlobalManifests(t *testing.T) {
	files, err := fs.Glob(global.Manifests, "*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("manifests %v, %v", files, err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			raw, err := global.Manifests.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(raw, &want.Object); err != nil {
				t.Fatal(err)
			}
			obj := want.DeepCopy()
			if err := fw.Client.Create(t.Context(), obj); err != nil {
				t.Fatal(err)
			}
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(want.GroupVersionKind())
			if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(want), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Object["spec"], got.Object["spec"]); diff != "" {
				t.Errorf("spec (-want,+got):\n%s", diff)
			}
		})
	}
}
