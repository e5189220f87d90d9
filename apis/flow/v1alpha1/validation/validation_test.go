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
	probed := func(targets []string, p flowv1alpha1.Probe) flowv1alpha1.Flow {
		return flowv1alpha1.Flow{Name: "b", DependsOn: &flowv1alpha1.DependsOn{Targets: targets, Probe: &p}}
	}
	get := func(port int, path, header string) flowv1alpha1.Probe {
		h := flowv1alpha1.HTTPGet{TaskName: "server", Port: port, Path: path}
		if header != "" {
			h.HTTPHeader = &flowv1alpha1.HTTPHeader{Name: header, Value: "v"}
		}
		return flowv1alpha1.Probe{HTTPGetList: []flowv1alpha1.HTTPGet{h}}
	}
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
		{"HTTP and TCP probes", jf(flow("a"), probed([]string{"a"}, flowv1alpha1.Probe{
			HTTPGetList: get(8080, "/healthz", "X-Probe").HTTPGetList, TCPSocketList: []flowv1alpha1.TCPSocket{{TaskName: "server", Port: 9090}}})), ""},
		{"a probe without targets", jf(flow("a"), probed(nil, get(8080, "", ""))),
			`spec.flows[1].dependsOn.targets: Required value: a probe asks the targets' pods: name the flows it waits for`},
		{"an HTTP probe's bad path, port and header", jf(flow("a"), probed([]string{"a"}, get(0, "healthz", "X Probe"))),
			`spec.flows[1].dependsOn.probe.httpGetList[0].port: Invalid value: 0: a port is between 1 and 65535; ` +
				`spec.flows[1].dependsOn.probe.httpGetList[0].path: Invalid value: "healthz": a path starts with /; ` +
				`spec.flows[1].dependsOn.probe.httpGetList[0].httpHeader.name: Invalid value: "X Probe": not a valid HTTP header name`},
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
