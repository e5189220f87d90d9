//go:build images

// Package images checks the OCI image layout `make images` writes: one
// multi-architecture index per binary, each image running its binary as the
// non-root user.
package images

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/caldera-sh/caldera/deploy/helm"
)

var components = []string{"caldera-scheduler", "caldera-controller-manager", "caldera-webhook", "caldera-agent", "caldera-global", "calderactl"}

func TestImageLayout(t *testing.T) {
	dir := os.Getenv("CALDERA_IMAGES")
	if dir == "" {
		dir = "../../_output/images"
	}
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatalf("%v (make images writes it)", err)
	}
	root, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := root.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	listed, err := os.ReadFile(filepath.Join(dir, "images.txt"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, desc := range im.Manifests {
		ref := desc.Annotations["org.opencontainers.image.ref.name"]
		name := ref[strings.LastIndex(ref, "/")+1:]
		name, _, _ = strings.Cut(name, ":")
		found[name] = true
		if !strings.Contains(string(listed), ref+"@"+desc.Digest.String()+"\n") {
			t.Errorf("images.txt does not list %s@%s:\n%s", ref, desc.Digest, listed)
		}
		idx, err := root.ImageIndex(desc.Digest)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		var arches []string
		for _, d := range m.Manifests {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			arches = append(arches, d.Platform.Architecture)
			if cf.Architecture != d.Platform.Architecture || cf.OS != "linux" {
				t.Errorf("%s: the %s image says %s/%s", ref, d.Platform.Architecture, cf.OS, cf.Architecture)
			}
			if got := strings.Join(cf.Config.Entrypoint, " "); got != "/usr/local/bin/"+name {
				t.Errorf("%s (%s): entrypoint %q", ref, cf.Architecture, got)
			}
			if cf.Config.User != "65532:65532" {
				t.Errorf("%s (%s): user %q, not the non-root 65532", ref, cf.Architecture, cf.Config.User)
			}
			layers, err := img.Layers()
			if err != nil || len(layers) != 2 {
				t.Errorf("%s (%s): %d layers, %v; want the base and the binary", ref, cf.Architecture, len(layers), err)
			}
		}
		if strings.Join(arches, ",") != "amd64,arm64" {
			t.Errorf("%s: architectures %v, want amd64 and arm64", ref, arches)
		}
	}
	for _, c := range components {
		if !found[c] {
			t.Errorf("no image of %s in %s", c, dir)
		}
	}
}

// TestPinnedCharts: make pin-images' step, run on a copy of the charts
// with the layout's images.txt, makes every chart name each image it runs
// by the tag and digest the layout holds.
func TestPinnedCharts(t *testing.T) {
	dir := os.Getenv("CALDERA_IMAGES")
	if dir == "" {
		dir = "../../_output/images"
	}
	listed, err := os.ReadFile(filepath.Join(dir, "images.txt"))
	if err != nil {
		t.Fatalf("%v (make images writes it)", err)
	}
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "deploy"), os.DirFS("../../deploy")); err != nil {
		t.Fatal(err)
	}
	// The copy starts with no digest, so that only pinning can put them in.
	for _, chart := range []string{"caldera", "caldera-global"} {
		path := filepath.Join(root, "deploy", "helm", chart, "values.yaml")
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		raw = regexp.MustCompile(`"sha256:[0-9a-f]{64}"`).ReplaceAll(raw, []byte(`""`))
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(t.Context(), "go", "run", "../../hack/images/pin", "-images", filepath.Join(dir, "images.txt"), "-root", root)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pin: %v\n%s", err, out)
	}
	want := map[string]bool{}
	for _, l := range strings.Fields(string(listed)) {
		if !strings.Contains(l, "/calderactl:") {
			want[l] = true
		}
	}
	got := map[string]bool{}
	for _, chart := range []string{"caldera", "caldera-global"} {
		r, err := helm.Render(filepath.Join(root, "deploy", "helm", chart), "caldera", "caldera-system", nil)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := r.Objects()
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				if img, ok := c.(map[string]any)["image"].(string); ok {
					got[img] = true
				}
			}
		}
	}
	for ref := range want {
		if !got[ref] {
			t.Errorf("no chart runs %s; they run %v", ref, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the charts run %v, want %v", got, want)
	}
}
