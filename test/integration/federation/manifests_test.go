//go:build integration

package federation

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/caldera-sh/caldera/deploy/global"
)

// TestGlobalManifests stores each object of deploy/global's manifests in
// the API server (with the Karmada mirror's CRDs) and reads it back: every
// field the manifest sets comes back with its value (defaults may add
// more).
func TestGlobalManifests(t *testing.T) {
	files, err := fs.Glob(global.Manifests, "*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("manifests %v, %v", files, err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return path.Base(f) == "kustomization.yaml" })
	// Karmada's installation makes the namespace of its members' Secrets.
	if err := fw.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-cluster"}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			raw, err := global.Manifests.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
			for {
				doc, err := r.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				want := &unstructured.Unstructured{}
				if err := yaml.Unmarshal(doc, &want.Object); err != nil {
					t.Fatal(err)
				}
				if len(want.Object) == 0 {
					continue
				}
				obj := want.DeepCopy()
				if err := fw.Client.Create(t.Context(), obj); client.IgnoreAlreadyExists(err) != nil {
					t.Fatalf("%s %s: %v", want.GetKind(), want.GetName(), err)
				}
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(want.GroupVersionKind())
				if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(want), got); err != nil {
					t.Fatal(err)
				}
				for _, field := range []string{"spec", "rules", "data"} {
					w, ok := want.Object[field]
					if !ok {
						continue
					}
					for _, p := range missing(w, got.Object[field]) {
						t.Errorf("%s %s: %s.%s", want.GetKind(), want.GetName(), field, p)
					}
				}
			}
		})
	}
}

// missing lists the paths of want that got lacks or holds differently.
func missing(want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%v: got %v", want, got)}
		}
		var out []string
		for k, v := range w {
			for _, p := range missing(v, g[k]) {
				out = append(out, k+"."+p)
			}
			if _, ok := g[k]; !ok {
				out = append(out, k+": missing")
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("want %d items, got %v", len(w), got)}
		}
		var out []string
		for i := range w {
			for _, p := range missing(w[i], g[i]) {
				out = append(out, fmt.Sprintf("[%d].%s", i, p))
			}
		}
		return out
	}
	if !reflect.DeepEqual(want, got) && fmt.Sprint(want) != fmt.Sprint(got) {
		return []string{fmt.Sprintf("want %v, got %v", want, got)}
	}
	return nil
}
