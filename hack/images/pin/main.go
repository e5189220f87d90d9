// Command pin writes the digests of the images `make images` built (its
// images.txt, one <registry>/<name>:<tag>@<digest> a line) into the charts'
// values, so that deploy/ names each image by tag and digest: make
// pin-images, then the manifests rendered from the charts are regenerated.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A component's digest goes to a line of a values file: key, under the
// block that holds it.
type target struct {
	file, block, key string
}

// targets are where each image's digest is written; calderactl runs in no
// chart.
var targets = map[string]target{
	"caldera-scheduler":          {"deploy/helm/caldera/values.yaml", "image_digests", "scheduler"},
	"caldera-controller-manager": {"deploy/helm/caldera/values.yaml", "image_digests", "controller"},
	"caldera-webhook":            {"deploy/helm/caldera/values.yaml", "image_digests", "admission"},
	"caldera-agent":              {"deploy/helm/caldera/values.yaml", "image_digests", "agent"},
	"caldera-global":             {"deploy/helm/caldera-global/values.yaml", "image", "digest"},
}

func main() {
	images := flag.String("images", "_output/images/images.txt", "the list make images writes")
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := run(*images, *root); err != nil {
		fmt.Fprintln(os.Stderr, "pin:", err)
		os.Exit(1)
	}
}

func run(images, root string) error {
	list, err := os.ReadFile(images)
	if err != nil {
		return err
	}
	digests, err := Parse(string(list))
	if err != nil {
		return fmt.Errorf("%s: %w", images, err)
	}
	byFile := map[string][]Setting{}
	for name, t := range targets {
		d, ok := digests[name]
		if !ok {
			return fmt.Errorf("%s names no image %s", images, name)
		}
		byFile[t.file] = append(byFile[t.file], Setting{Block: t.block, Key: t.key, Value: d})
	}
	for file, settings := range byFile {
		path := filepath.Join(root, file)
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, err := Set(string(raw), settings)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d digests\n", file, len(settings))
	}
	return nil
}

// Parse reads images.txt: the digest of each image by its name (the last
// path element of its repository).
func Parse(list string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(list, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		ref, digest, ok := strings.Cut(line, "@")
		if !ok || !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 {
			return nil, fmt.Errorf("line %d: %q is not <image>:<tag>@sha256:<64 hex digits>", i+1, line)
		}
		repo, _, _ := strings.Cut(ref[strings.LastIndex(ref, "/")+1:], ":")
		out[repo] = digest
	}
	return out, nil
}

// Setting is a value to write: Key's line under the Block line.
type Setting struct {
	Block, Key, Value string
}

// Set writes each setting's value on its key's line, under its block,
// keeping everything else of the file (comments, order) as it was. A key
// not found is an error: the file and the pinning disagree.
func Set(file string, settings []Setting) (string, error) {
	lines := strings.Split(file, "\n")
	for _, s := range settings {
		block := -1
		for i, l := range lines {
			if strings.TrimSpace(l) == s.Block+":" {
				block = i
				break
			}
		}
		if block < 0 {
			return "", fmt.Errorf("no %q block", s.Block)
		}
		indent := len(lines[block]) - len(strings.TrimLeft(lines[block], " "))
		found := false
		for i := block + 1; i < len(lines); i++ {
			l := lines[i]
			trimmed := strings.TrimLeft(l, " ")
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			in := len(l) - len(trimmed)
			if in <= indent {
				break
			}
			if strings.HasPrefix(trimmed, s.Key+":") {
				lines[i] = l[:in] + s.Key + ": " + fmt.Sprintf("%q", s.Value)
				found = true
				break
			}
		}
		if !found {
			return "", fmt.Errorf("no %s under %s", s.Key, s.Block)
		}
	}
	return strings.Join(lines, "\n"), nil
}
