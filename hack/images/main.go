// Command images builds Caldera's container images without a container
// engine: each binary is cross-compiled for every platform (static, no cgo),
// laid on a small base (passwd and group naming the non-root user 65532, the
// CA bundle, /tmp) and written, one multi-architecture index per binary, to
// an OCI image layout. The same source and flags give the same digests: the
// layers' files are sorted, owned by root and dated zero, and the images are
// dated with the commit.
//
//	go run ./hack/images -out _output/images -tag v0.1.0
//
// It prints each image's reference and digest, and writes them to
// <out>/images.txt.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Components are the binaries that get an image.
var Components = []string{"caldera-scheduler", "caldera-controller-manager", "caldera-webhook", "caldera-agent", "caldera-global", "calderactl"}

func main() {
	out := flag.String("out", "_output/images", "the OCI image layout to write (replaced)")
	registry := flag.String("registry", "ghcr.io/caldera-sh", "the repository prefix of the images' names")
	tag := flag.String("tag", "v0.1.0", "the images' tag")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64", "the platforms of every image")
	components := flag.String("components", strings.Join(Components, ","), "the binaries to make images of")
	caBundle := flag.String("ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle the images carry")
	flag.Parse()
	if err := run(*out, *registry, *tag, strings.Split(*platforms, ","), strings.Split(*components, ","), *caBundle); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(out, registry, tag string, platforms, components []string, caBundle string) error {
	ca, err := os.ReadFile(caBundle)
	if err != nil {
		return fmt.Errorf("-ca-bundle: %w", err)
	}
	var arches []string
	for _, p := range platforms {
		goos, arch, ok := strings.Cut(p, "/")
		if !ok || goos != "linux" || arch == "" {
			return fmt.Errorf("-platforms: %q is not linux/<arch>", p)
		}
		arches = append(arches, arch)
	}
	created, revision := commit()
	work, err := os.MkdirTemp("", "caldera-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	if err := os.RemoveAll(out); err != nil {
		return err
	}
	lp, err := layout.Write(out, empty.Index)
	if err != nil {
		return err
	}
	var list strings.Builder
	for _, c := range components {
		images := map[string]v1.Image{}
		for _, arch := range arches {
			bin := filepath.Join(work, arch, c)
			if err := build(c, arch, bin); err != nil {
				return err
			}
			data, err := os.ReadFile(bin)
			if err != nil {
				return err
			}
			img, err := image(spec{name: c, arch: arch, binary: data, caBundle: ca, created: created, labels: map[string]string{
				"org.opencontainers.image.title":    c,
				"org.opencontainers.image.source":   "https://github.com/caldera-sh/caldera",
				"org.opencontainers.image.version":  tag,
				"org.opencontainers.image.revision": revision,
			}})
			if err != nil {
				return fmt.Errorf("%s for %s: %w", c, arch, err)
			}
			images[arch] = img
		}
		idx := index(images)
		ref := registry + "/" + c + ":" + tag
		if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
			return err
		}
		d, err := idx.Digest()
		if err != nil {
			return err
		}
		fmt.Fprintf(&list, "%s@%s\n", ref, d)
	}
	fmt.Print(list.String())
	return os.WriteFile(filepath.Join(out, "images.txt"), []byte(list.String()), 0o644)
}

// build cross-compiles ./cmd/<name> for linux/<arch>, static and stripped,
// with no path of this machine in it.
func build(name, arch, to string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", to, "./cmd/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = os.Stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/%s for %s: %v\n%s", name, arch, err, stderr.String())
	}
	return nil
}

// commit returns the checkout's commit time and revision (SOURCE_DATE_EPOCH
// wins for the time), or time zero and "unknown" outside a git checkout.
func commit() (time.Time, string) {
	created := time.Unix(0, 0)
	revision := "unknown"
	if out, err := exec.Command("git", "log", "-1", "--format=%ct %H").Output(); err == nil {
		if secs, rev, ok := strings.Cut(strings.TrimSpace(string(out)), " "); ok {
			if n, err := strconv.ParseInt(secs, 10, 64); err == nil {
				created = time.Unix(n, 0)
			}
			revision = rev
		}
	}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			created = time.Unix(n, 0)
		}
	}
	return created, revision
}
