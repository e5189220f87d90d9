package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
)

func flow(name string, targets ...string) flowv1alpha1.Flow {
	f := flowv1alpha1.Flow{Name: name}
	if len(targets) > 0 {
		f.DependsOn = &flowv1alpha1.DependsOn{Targets: targets}
	}
	return f
}

func TestValidateJobFlow(t *testing.T) {
	jf := func(flows ...flowv1alpha1.Flow) *flowv1alpha1.JobFlow {
		return &flowv1alpha1.JobFlow{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pipeline"}, Spec: flowv1alpha1.JobFlowSpec{Flows: flows}}
	}
	badPatch := flow("b", "a")
	badPatch.Patch = &flowv1alpha1.Patch{JobSpec: &runtime.RawExtension{Raw: []byte(`[1]`)}}
	for _, tc := range []struct {
		name string
		jf   *flowv1alpha1.JobFlow
		want string
	}{
		{"a diamond", jf(flow("prep"), flow("train", "prep"), flow("eval", "prep"), flow("report", "train", "eval")), ""},
		{"a cycle", jf(flow("a", "c"), flow("b", "a"), flow("c", "b")),
			`spec.flows[0].dependsOn.targets: Invalid value: ["c"]: the flows depend on each other in a cycle: a → c → b → a`},
		{"itself", jf(flow("a", "a")), `spec.flows[0].dependsOn.targets[0]: Invalid value: "a": a flow cannot depend on itself`},
		{"a missing target", jf(flow("a"), flow("b", "z")), `spec.flows[1].dependsOn.targets[0]: Not found: "z"`},
		{"a duplicate", jf(flow("a"), flow("a")), `spec.flows[1].name: Duplicate value: "a"`},
		{"a patch that is not an object", jf(flow("a"), badPatch), `spec.flows[1].patch.jobSpec: Invalid value: "[1]": must be a JSON object of Job spec fields`},
		{"a name too long for its Job", jf(flow(strings.Repeat("x", 60))),
			`spec.flows[0].name: Invalid value: "` + strings.Repeat("x", 60) + `": the Job name "pipeline-` + strings.Repeat("x", 60) + `" (<jobflow>-<flow>) is longer than 63 characters`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range ValidateJobFlow(tc.jf) {
				got = append(got, e.Error())
			}
			if g := strings.Join(got, "; "); g != tc.want {
				t.Errorf("got  %s\nwant %s", g, tc.want)
			}
		})
	}
}
