// Package helm renders the charts under deploy/helm with Helm's own template
// engine, as `helm template` does, for the tests that check them and for the
// test that writes deploy/member from the member chart.
package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Rendered is what a chart renders for one set of values.
type Rendered struct {
	// Templates maps a template's file name (scheduler.yaml) to its
	// output; templates that render nothing but comments or blanks are left
	// out, as are helpers (_*.tpl).
	Templates map[string]string
	// CRDs maps a file of the chart's crds/ to its content.
	CRDs map[string][]byte
}

// Render renders the chart in dir with values over its own, as release
// name into namespace.
func Render(dir, name, namespace string, values map[string]any) (*Rendered, error) {
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("loading the chart %s: %w", dir, err)
	}
	vals, err := util.ToRenderValues(ch, values, common.ReleaseOptions{Name: name, Namespace: namespace, IsInstall: true, Revision: 1}, nil)
	if err != nil {
		return nil, fmt.Errorf("values of %s: %w", dir, err)
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	r := &Rendered{Templates: map[string]string{}, CRDs: map[string][]byte{}}
	for file, text := range out {
		base := path.Base(file)
		if strings.HasPrefix(base, "_") || !strings.HasSuffix(base, ".yaml") || onlyComments(text) {
			continue
		}
		r.Templates[base] = text
	}
	for _, f := range ch.CRDs() {
		r.CRDs[path.Base(f.Name)] = f.Data
	}
	return r, nil
}

// ValuesFile reads a values file.
func ValuesFile(file string) (map[string]any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	vals := map[string]any{}
	if err := yaml.Unmarshal(data, &vals); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return vals, nil
}

// Objects returns every object of the rendered chart, CRDs first, then the
// templates' objects in the order of their file names.
func (r *Rendered) Objects() ([]*unstructured.Unstructured, error) {
	var all []*unstructured.Unstructured
	add := func(name string, data []byte) error {
		objs, err := Decode(data)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		all = append(all, objs...)
		return nil
	}
	for _, n := range slices.Sorted(maps.Keys(r.CRDs)) {
		if err := add(n, r.CRDs[n]); err != nil {
			return nil, err
		}
	}
	for _, n := range slices.Sorted(maps.Keys(r.Templates)) {
		if err := add(n, []byte(r.Templates[n])); err != nil {
			return nil, err
		}
	}
	return all, nil
}

// Decode splits a multi-document YAML stream into objects, skipping empty
// documents.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return objs, nil
			}
			return nil, err
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) || bytes.Equal(t, []byte("{}")) {
			continue
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
}

func onlyComments(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && l != "---" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}
