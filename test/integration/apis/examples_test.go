//go:build integration

package apis

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

const examplesDir = "../../../examples"

// TestExamplesApplyWithoutLoss applies every manifest under examples/ with
// `kubectl apply --server-side` (strict field validation, as kubectl does by
// default) and reads each object back: every field the file sets must come
// back with the same value, so a field the CRD schema does not know (and
// would prune) fails the test.
func TestExamplesApplyWithoutLoss(t *testing.T) {
	files := yamlFiles(t, examplesDir)
	if len(files) == 0 {
		t.Fatalf("no examples found under %s", examplesDir)
	}
	dyn, mapper := dynamicClient(t)
	for _, file := range files {
		rel, _ := filepath.Rel(examplesDir, file)
		t.Run(rel, func(t *testing.T) {
			objs := readObjects(t, file)
			_, stderr, err := fw.Kubectl(t.Context(), "apply", "--server-side", "--field-manager=examples-test", "-f", file)
			if err != nil {
				t.Fatalf("kubectl apply --server-side -f %s: %v\n%s", rel, err, stderr)
			}
			for _, want := range objs {
				gvk := want.GroupVersionKind()
				m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					t.Fatalf("mapping %s: %v", gvk, err)
				}
				ri := dyn.Resource(m.Resource)
				var got *unstructured.Unstructured
				if m.Scope.Name() == "namespace" {
					ns := want.GetNamespace()
					if ns == "" {
						ns = "default"
					}
					got, err = ri.Namespace(ns).Get(t.Context(), want.GetName(), metav1.GetOptions{})
				} else {
					got, err = ri.Get(t.Context(), want.GetName(), metav1.GetOptions{})
				}
				if err != nil {
					t.Fatalf("reading back %s %s: %v", gvk.Kind, want.GetName(), err)
				}
				for _, p := range missing(want.Object, got.Object, "") {
					t.Errorf("%s %s: %s", gvk.Kind, want.GetName(), p)
				}
			}
		})
	}
}

// missing lists the paths of want that got lacks or holds with a different
// value. Numbers compare by value; lists compare element by element.
func missing(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %T", pathOrRoot(path), got)}
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: lost (pruned or dropped by the server)", path, k))
				continue
			}
			out = append(out, missing(w[k], gv, path+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want a list of %d, got %v", pathOrRoot(path), len(w), got)}
		}
		var out []string
		for i := range w {
			out = append(out, missing(w[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	default:
		if !sameScalar(want, got) {
			return []string{fmt.Sprintf("%s: want %v, got %v", pathOrRoot(path), want, got)}
		}
		return nil
	}
}

func sameScalar(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

func pathOrRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func yamlFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

func readObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

func dynamicClient(t *testing.T) (dynamic.Interface, *restmapper.DeferredDiscoveryRESTMapper) {
	t.Helper()
	cfg := fw.RESTConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
}
