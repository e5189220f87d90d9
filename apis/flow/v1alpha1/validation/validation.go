// Package validation checks flow.volcano.sh/v1alpha1 JobFlows beyond their
// schema: flow names that make valid Job names, once each; dependencies on
// flows that exist, without cycles; probes with ports; patches that are
// JSON objects.
package validation

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
)

// JobName is the name of the Job a flow of a JobFlow runs.
func JobName(flow, name string) string { return flow + "-" + name }

// ValidateJobFlow checks a JobFlow.
func ValidateJobFlow(jf *flowv1alpha1.JobFlow) field.ErrorList {
	var errs field.ErrorList
	flowsPath := field.NewPath("spec", "flows")
	switch jf.Spec.JobRetainPolicy {
	case "", flowv1alpha1.Retain, flowv1alpha1.Delete:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("spec", "jobRetainPolicy"), jf.Spec.JobRetainPolicy,
			[]flowv1alpha1.RetainPolicy{flowv1alpha1.Retain, flowv1alpha1.Delete}))
	}
	names := map[string]int{}
	for i, f := range jf.Spec.Flows {
		p := flowsPath.Index(i).Child("name")
		if _, dup := names[f.Name]; dup {
			errs = append(errs, field.Duplicate(p, f.Name))
			continue
		}
		names[f.Name] = i
		for _, msg := range utilvalidation.IsDNS1123Subdomain(f.Name) {
			errs = append(errs, field.Invalid(p, f.Name, msg))
		}
		if jf.Name != "" {
			if job := JobName(jf.Name, f.Name); len(job) > 63 {
				errs = append(errs, field.Invalid(p, f.Name, fmt.Sprintf("the Job name %q (<jobflow>-<flow>) is longer than 63 characters", job)))
			}
		}
	}
	deps := map[string][]string{}
	for i, f := range jf.Spec.Flows {
		fp := flowsPath.Index(i)
		if f.Patch != nil && f.Patch.JobSpec != nil {
			var obj map[string]any
			if err := json.Unmarshal(f.Patch.JobSpec.Raw, &obj); err != nil || obj == nil {
				errs = append(errs, field.Invalid(fp.Child("patch", "jobSpec"), string(f.Patch.JobSpec.Raw), "must be a JSON object of Job spec fields"))
			}
		}
		if f.DependsOn == nil {
			continue
		}
		dp := fp.Child("dependsOn")
		for j, t := range f.DependsOn.Targets {
			switch _, ok := names[t]; {
			case t == f.Name:
				errs = append(errs, field.Invalid(dp.Child("targets").Index(j), t, "a flow cannot depend on itself"))
			case !ok:
				errs = append(errs, field.NotFound(dp.Child("targets").Index(j), t))
			default:
				deps[f.Name] = append(deps[f.Name], t)
			}
		}
		if pr := f.DependsOn.Probe; pr != nil {
			if len(f.DependsOn.Targets) == 0 && len(pr.TCPSocketList)+len(pr.HTTPGetList)+len(pr.TaskStatusList) > 0 {
				errs = append(errs, field.Required(dp.Child("targets"), "a probe asks the targets' pods: name the flows it waits for"))
			}
			for j, tcp := range pr.TCPSocketList {
				if tcp.Port < 1 || tcp.Port > 65535 {
					errs = append(errs, field.Invalid(dp.Child("probe", "tcpSocketList").Index(j).Child("port"), tcp.Port, "a port is between 1 and 65535"))
				}
			}
			for j, h := range pr.HTTPGetList {
				hp := dp.Child("probe", "httpGetList").Index(j)
				if h.Port < 1 || h.Port > 65535 {
					errs = append(errs, field.Invalid(hp.Child("port"), h.Port, "a port is between 1 and 65535"))
				}
				if h.Path != "" && !strings.HasPrefix(h.Path, "/") {
					errs = append(errs, field.Invalid(hp.Child("path"), h.Path, "a path starts with /"))
				}
				if hh := h.HTTPHeader; hh != nil && !httpguts.ValidHeaderFieldName(hh.Name) {
					errs = append(errs, field.Invalid(hp.Child("httpHeader", "name"), hh.Name, "not a valid HTTP header name"))
				}
			}
		}
	}
	if cycle := findCycle(jf.Spec.Flows, deps); cycle != nil {
		errs = append(errs, field.Invalid(flowsPath.Index(names[cycle[0]]).Child("dependsOn", "targets"), jf.Spec.Flows[names[cycle[0]]].DependsOn.Targets,
			"the flows depend on each other in a cycle: "+strings.Join(cycle, " → ")))
	}
	return errs
}

// findCycle returns a dependency cycle (its first flow repeated at the
// end), or nil.
func findCycle(flows []flowv1alpha1.Flow, deps map[string][]string) []string {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(string) []string
	visit = func(n string) []string {
		state[n] = open
		stack = append(stack, n)
		for _, d := range deps[n] {
			switch state[d] {
			case open:
				i := slices.Index(stack, d)
				return append(slices.Clone(stack[i:]), d)
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, f := range flows {
		if state[f.Name] == unseen {
			if c := visit(f.Name); c != nil {
				return c
			}
		}
	}
	return nil
}
