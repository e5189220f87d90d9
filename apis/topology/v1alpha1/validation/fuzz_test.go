package validation_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	testingtopo "github.com/caldera-sh/caldera/apis/topology/v1alpha1/testing"
	"github.com/caldera-sh/caldera/apis/topology/v1alpha1/validation"
)

func summary(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field+": "+e.Detail)
	}
	return out
}

// FuzzValidateHyperNode decodes a HyperNode and validates it: nothing
// panics, validation is deterministic and leaves the HyperNode unchanged.
// HyperNodes have no defaulting.
func FuzzValidateHyperNode(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "topology", "*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no examples: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(j)
	}
	built, err := json.Marshal(testingtopo.MakeHyperNode("s", 2).ExactHyperNode("s").ExactNode("Node_1").ExactNode("Node_1").
		RegexNodes("(").LabelNodes(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "In"}}}).Obj())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(built)
	f.Fuzz(func(t *testing.T, data []byte) {
		var hn topologyv1alpha1.HyperNode
		if err := json.Unmarshal(data, &hn); err != nil {
			return
		}
		before := hn.DeepCopy()
		first := summary(validation.ValidateHyperNode(&hn))
		if !apiequality.Semantic.DeepEqual(before, &hn) {
			t.Fatal("ValidateHyperNode changed the HyperNode")
		}
		second := summary(validation.ValidateHyperNode(hn.DeepCopy()))
		if len(first) != len(second) {
			t.Fatalf("ValidateHyperNode is not deterministic:\n%q\n%q", first, second)
		}
		for i := range first {
			if first[i] != second[i] {
				t.Fatalf("ValidateHyperNode is not deterministic:\n%q\n%q", first, second)
			}
		}
	})
}
