package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The user every image runs as: no name on the host, no privilege.
const (
	nonRootUID = 65532
	binDir     = "/usr/local/bin"
	caFile     = "/etc/ssl/certs/ca-certificates.crt"
)

// file is one entry of a layer.
type file struct {
	name string // absolute path in the image
	mode int64  // permission bits, and fs.ModeDir's meaning through dir
	dir  bool
	data []byte
}

// layer makes a gzip-compressed OCI layer of files, the same bytes for the
// same files: entries sorted by name, owned by root, every time zero.
func layer(files []file) (v1.Layer, error) {
	sorted := append([]file(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range sorted {
		h := &tar.Header{Name: f.name[1:], Mode: f.mode, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// baseFiles is what every image has besides its binary: a passwd and group
// that name root and the non-root user, the CA bundle, a /tmp, and the
// user's home.
func baseFiles(caBundle []byte) []file {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonRootUID, nonRootUID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonRootUID)
	return []file{
		{name: "/etc", mode: 0o755, dir: true},
		{name: "/etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "/etc/group", mode: 0o644, data: []byte(group)},
		{name: "/etc/ssl", mode: 0o755, dir: true},
		{name: "/etc/ssl/certs", mode: 0o755, dir: true},
		{name: caFile, mode: 0o644, data: caBundle},
		{name: "/home", mode: 0o755, dir: true},
		{name: "/home/nonroot", mode: 0o700, dir: true},
		{name: "/tmp", mode: 0o1777, dir: true},
		{name: "/usr", mode: 0o755, dir: true},
		{name: "/usr/local", mode: 0o755, dir: true},
		{name: binDir, mode: 0o755, dir: true},
	}
}

// spec is one image to make.
type spec struct {
	name     string // the binary's name, e.g. caldera-scheduler
	arch     string // GOARCH
	binary   []byte
	caBundle []byte
	created  time.Time
	labels   map[string]string
}

// image makes a two-layer OCI image (base, binary) that runs the binary as
// the non-root user.
func image(s spec) (v1.Image, error) {
	base, err := layer(baseFiles(s.caBundle))
	if err != nil {
		return nil, err
	}
	bin, err := layer([]file{{name: path.Join(binDir, s.name), mode: 0o755, data: s.binary}})
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	created := v1.Time{Time: s.created.UTC()}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: "caldera base: passwd, group, CA bundle, /tmp", Comment: "hack/images"}},
		mutate.Addendum{Layer: bin, History: v1.History{Created: created, CreatedBy: binDir + "/" + s.name, Comment: "hack/images"}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = s.arch, "linux"
	cf.Created = created
	cf.Config = v1.Config{
		Entrypoint: []string{path.Join(binDir, s.name)},
		User:       fmt.Sprintf("%d:%d", nonRootUID, nonRootUID),
		WorkingDir: "/home/nonroot",
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=" + caFile, "HOME=/home/nonroot"},
		Labels:     s.labels,
	}
	return mutate.ConfigFile(img, cf)
}

// index makes the multi-architecture index of one binary's images.
func index(images map[string]v1.Image) v1.ImageIndex {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	arches := make([]string, 0, len(images))
	for a := range images {
		arches = append(arches, a)
	}
	sort.Strings(arches)
	for _, a := range arches {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        images[a],
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: a}},
		})
	}
	return idx
}
