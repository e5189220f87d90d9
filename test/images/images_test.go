//go:build images

// Package images checks the OCI image layout `make images` writes: one
// multi-architecture index per binary, each image running its binary as the
// non-root user.
package images

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
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
