package main

import (
	"archive/tar"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func testSpec(arch string) spec {
	return spec{name: "caldera-scheduler", arch: arch, binary: []byte("\x7fELF not really"), caBundle: []byte("-----BEGIN CERTIFICATE-----\n"),
		created: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), labels: map[string]string{"org.opencontainers.image.version": "v0.1.0"}}
}

// TestImageIsReproducible: the same spec gives the same digest; another
// binary another.
func TestImageIsReproducible(t *testing.T) {
	digest := func(s spec) v1.Hash {
		img, err := image(s)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b := digest(testSpec("amd64")), digest(testSpec("amd64"))
	if a != b {
		t.Errorf("two builds of one spec: %s and %s", a, b)
	}
	other := testSpec("amd64")
	other.binary = []byte("another")
	if digest(other) == a {
		t.Error("another binary, the same digest")
	}
}

// files reads every layer's entries, later layers over earlier ones.
func files(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*tar.Header{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got["/"+strings.TrimSuffix(h.Name, "/")] = h
			if h.Name == "etc/passwd" {
				data, _ := io.ReadAll(tr)
				if !strings.Contains(string(data), "nonroot:x:65532:65532:") {
					t.Errorf("passwd:\n%s", data)
				}
			}
		}
		rc.Close()
	}
	return got
}

// TestImageRunsItsBinaryAsNonRoot: the configuration, the files, and the
// index's platforms.
func TestImageRunsItsBinaryAsNonRoot(t *testing.T) {
	img, err := image(testSpec("arm64"))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != "arm64" || cf.OS != "linux" {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	if got := strings.Join(cf.Config.Entrypoint, " "); got != "/usr/local/bin/caldera-scheduler" {
		t.Errorf("entrypoint %q", got)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q", cf.Config.User)
	}
	if !cf.Created.Time.Equal(testSpec("arm64").created) {
		t.Errorf("created %s", cf.Created)
	}
	fs := files(t, img)
	for name, mode := range map[string]int64{"/usr/local/bin/caldera-scheduler": 0o755, "/etc/passwd": 0o644, caFile: 0o644, "/tmp": 0o1777} {
		h := fs[name]
		if h == nil {
			t.Errorf("no %s in %v", name, fs)
			continue
		}
		if h.Mode != mode || h.Uid != 0 || !h.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: mode %o uid %d time %s", name, h.Mode, h.Uid, h.ModTime)
		}
	}

	other, err := image(testSpec("amd64"))
	if err != nil {
		t.Fatal(err)
	}
	im, err := index(map[string]v1.Image{"arm64": img, "amd64": other}).IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, m := range im.Manifests {
		plats = append(plats, m.Platform.String())
	}
	if strings.Join(plats, ",") != "linux/amd64,linux/arm64" {
		t.Errorf("platforms %v", plats)
	}
}
