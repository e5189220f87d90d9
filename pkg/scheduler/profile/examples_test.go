package profile

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
)

const examplesDir = "../../../examples/scheduler"

var argsAsJSON = cmp.Transformer("args", func(r runtime.RawExtension) any {
	var v any
	if err := json.Unmarshal(r.Raw, &v); err != nil {
		return string(r.Raw)
	}
	return v
})

// TestExamples loads every file in examples/scheduler with this build's
// plugins and actions, checks that it survives a round trip through
// Caldera's format (written out as YAML and loaded again, it is the same
// configuration), and builds the scheduler's profile from it.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examplesDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no examples in %s", examplesDir)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			cfg, err := config.LoadFile(file, NameRegistry())
			if err != nil {
				t.Fatal(err)
			}
			out, err := yaml.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			again, err := config.Load(out, NameRegistry())
			if err != nil {
				t.Fatalf("loading the written configuration: %v\n%s", err, out)
			}
			if diff := cmp.Diff(cfg, again, argsAsJSON); diff != "" {
				t.Errorf("round trip (-loaded,+reloaded):\n%s", diff)
			}
			h := &framework.Handle{}
			fitOpts, needFit, err := PodFitOptions(cfg)
			if err != nil {
				t.Fatalf("pod evaluator options: %v", err)
			}
			if needFit {
				// The evaluator only needs informers to start; no API
				// behaviour is under test here.
				cs := fake.NewClientset()
				factory := informers.NewSharedInformerFactory(cs, 0)
				fit, err := podfit.New(t.Context(), podfit.Options{InformerFactory: factory, ClientSet: cs, Profile: fitOpts})
				if err != nil {
					t.Fatalf("pod evaluator: %v", err)
				}
				t.Cleanup(func() { _ = fit.Close() })
				h.PodFit = fit
			}
			if _, err := Build(cfg, h); err != nil {
				t.Errorf("building the profile: %v", err)
			}
		})
	}
}
