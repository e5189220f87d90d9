package deploy

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestCRDKustomization: crds/kustomization.yaml lists every CRD file, so
// that kubectl apply -k deploy/crds installs them all.
func TestCRDKustomization(t *testing.T) {
	files, err := fs.Glob(CRDs, CRDDir+"/*_*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("CRDs %v: %v", files, err)
	}
	raw, err := os.ReadFile(path.Join(CRDDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !slices.Contains(k.Resources, path.Base(f)) {
			t.Errorf("crds/kustomization.yaml does not list %s", path.Base(f))
		}
	}
	if len(k.Resources) != len(files) {
		t.Errorf("crds/kustomization.yaml lists %d files, there are %d CRDs", len(k.Resources), len(files))
	}
}
