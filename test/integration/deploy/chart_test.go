//go:build integration

package deploy

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/caldera-sh/caldera/deploy/helm"
	"github.com/caldera-sh/caldera/test/poll"
)

const memberChart = "../../../deploy/helm/caldera"

// byKey indexes objects by kind, namespace and name, failing on a repeat.
func byKey(t *testing.T, what string, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	m := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		k := o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
		if _, dup := m[k]; dup {
			t.Errorf("%s: %s twice", what, k)
		}
		m[k] = o
	}
	return m
}

// renderChart renders the member chart into caldera-system with a value
// set of ci/ (none: the defaults).
func renderChart(t *testing.T, set string) *helm.Rendered {
	t.Helper()
	var values map[string]any
	if set != "" {
		v, err := helm.ValuesFile(filepath.Join(memberChart, "ci", set+"-values.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		values = v
	}
	r, err := helm.Render(memberChart, "caldera", ns, values)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestChartIsTheKustomization: the member chart, with its defaults and with
// each value set docs/install.md documents, renders object for object what
// kubectl kustomize renders of deploy/member and of the overlay with the
// same settings (testdata/<set>), the namespace object aside (Helm's
// --create-namespace makes it); and what the chart renders applies to the
// API server with server-side apply (a server-side dry run).
func TestChartIsTheKustomization(t *testing.T) {
	ensureNamespace(t, ns)
	kubectl(t, "apply", "--server-side", "--field-manager=deploy-test", "-f", "testdata/servicemonitor-crd.yaml")
	poll.Eventually(t, t.Context(), 30*time.Second, "the ServiceMonitor CRD served", func() (bool, string) {
		out, _, err := fw.Kubectl(t.Context(), "get", "servicemonitors", "-A")
		return err == nil, out
	})
	for _, set := range []string{"", "single-replica", "volcano", "monitoring"} {
		name, dir := set, filepath.Join("testdata", set)
		if set == "" {
			name, dir = "defaults", "../../../deploy/member"
		}
		t.Run(name, func(t *testing.T) {
			checkChart(t, renderChart(t, set), dir)
		})
	}
}

// checkChart requires what the chart rendered (r) and kubectl kustomize of
// dirs to be the same objects, the Namespace objects of the kustomizations
// aside (Helm's --create-namespace makes the release's), and the chart's
// objects to apply server-side (a server-side dry run: validated and
// admitted like the real thing, and left out of the other tests).
func checkChart(t *testing.T, r *helm.Rendered, dirs ...string) {
	t.Helper()
	objs, err := r.Objects()
	if err != nil {
		t.Fatal(err)
	}
	chart := byKey(t, "chart", objs)
	var kobjs []*unstructured.Unstructured
	for _, dir := range dirs {
		more, err := helm.Decode([]byte(kubectl(t, "kustomize", dir)))
		if err != nil {
			t.Fatal(err)
		}
		kobjs = append(kobjs, more...)
	}
	kust := byKey(t, "kustomize", kobjs)
	for k := range kust {
		if strings.HasPrefix(k, "Namespace//") && chart[k] == nil {
			delete(kust, k)
		}
	}
	var onlyChart, onlyKust, differ []string
	for k, o := range chart {
		ko, ok := kust[k]
		switch {
		case !ok:
			onlyChart = append(onlyChart, k)
		case !reflect.DeepEqual(o.Object, ko.Object):
			a, _ := yaml.Marshal(o.Object)
			b, _ := yaml.Marshal(ko.Object)
			differ = append(differ, k+":\n--- chart\n"+string(a)+"--- kustomize\n"+string(b))
		}
	}
	for k := range kust {
		if chart[k] == nil {
			onlyKust = append(onlyKust, k)
		}
	}
	sort.Strings(onlyChart)
	sort.Strings(onlyKust)
	sort.Strings(differ)
	if len(onlyChart)+len(onlyKust)+len(differ) > 0 {
		t.Errorf("the chart and %v disagree:\nonly in the chart: %v\nonly in kustomize: %v\ndifferent:\n%s", dirs, onlyChart, onlyKust, strings.Join(differ, "\n"))
	}

	file := filepath.Join(t.TempDir(), "chart.yaml")
	var all strings.Builder
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString("---\n")
		all.Write(data)
	}
	if err := os.WriteFile(file, []byte(all.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := kubectl(t, "apply", "--server-side", "--dry-run=server", "--field-manager=helm", "-f", file)
	if n := strings.Count(out, "serverside-applied"); n != len(objs) {
		t.Errorf("%d of %d objects applied:\n%s", n, len(objs), out)
	}
}

// TestGlobalChartsAreTheKustomizations: the same for the global layer's two
// charts: caldera-global is deploy/global/host, caldera-global-karmada is
// deploy/global/karmada with the CRDs of deploy/crds.
func TestGlobalChartsAreTheKustomizations(t *testing.T) {
	ensureNamespace(t, ns)
	ensureNamespace(t, "karmada-cluster")
	t.Run("caldera-global", func(t *testing.T) {
		r, err := helm.Render("../../../deploy/helm/caldera-global", "caldera-global", ns, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkChart(t, r, "../../../deploy/global/host")
	})
	t.Run("caldera-global-karmada", func(t *testing.T) {
		r, err := helm.Render("../../../deploy/helm/caldera-global-karmada", "caldera-global-karmada", "karmada-system", nil)
		if err != nil {
			t.Fatal(err)
		}
		checkChart(t, r, "../../../deploy/global/karmada", "../../../deploy/crds")
	})
}
