package core

import (
	"fmt"

	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	"github.com/caldera-sh/caldera/apis/flow/v1alpha1/validation"
)

// ProbeKind is an HTTP GET or a TCP connection.
type ProbeKind string

// Probe kinds.
const (
	HTTPGetProbe   ProbeKind = "httpGet"
	TCPSocketProbe ProbeKind = "tcpSocket"
)

// ProbeRef names one probe of a flow: the index-th entry of its
// httpGetList or tcpSocketList.
type ProbeRef struct {
	Flow  string
	Kind  ProbeKind
	Index int
}

func (r ProbeRef) String() string {
	return fmt.Sprintf("%s %sList[%d]", r.Flow, r.Kind, r.Index)
}

// ProbeRequest is a probe the controller runs: it holds when one running
// pod of the task (every task when TaskName is empty) of one of the Jobs
// answers: an HTTP GET of Path on Port with a 2xx or 3xx status, or a TCP
// connection to Port.
type ProbeRequest struct {
	Ref      ProbeRef
	Jobs     []string
	TaskName string
	Port     int
	// Path and Header are the HTTP GET's; Path defaults to "/".
	Path   string
	Header *flowv1alpha1.HTTPHeader
}

// ProbesToRun lists the probes whose answers the decision needs now: those
// of flows not started whose targets' Jobs all exist. Probes of other
// flows would decide nothing.
func ProbesToRun(in Input) []ProbeRequest {
	jf := in.Flow
	if jf.Status.State.Phase == flowv1alpha1.Succeed || jf.DeletionTimestamp != nil {
		return nil
	}
	var out []ProbeRequest
	for _, f := range jf.Spec.Flows {
		if f.DependsOn == nil || f.DependsOn.Probe == nil || in.Jobs[validation.JobName(jf.Name, f.Name)] != nil {
			continue
		}
		var jobs []string
		for _, t := range f.DependsOn.Targets {
			name := validation.JobName(jf.Name, t)
			if in.Jobs[name] == nil {
				jobs = nil
				break
			}
			jobs = append(jobs, name)
		}
		if len(jobs) == 0 {
			continue
		}
		p := f.DependsOn.Probe
		for i, h := range p.HTTPGetList {
			path := h.Path
			if path == "" {
				path = "/"
			}
			out = append(out, ProbeRequest{Ref: ProbeRef{f.Name, HTTPGetProbe, i}, Jobs: jobs, TaskName: h.TaskName, Port: h.Port, Path: path, Header: h.HTTPHeader})
		}
		for i, t := range p.TCPSocketList {
			out = append(out, ProbeRequest{Ref: ProbeRef{f.Name, TCPSocketProbe, i}, Jobs: jobs, TaskName: t.TaskName, Port: t.Port})
		}
	}
	return out
}

// probesHold reports whether every HTTP and TCP probe of a flow answered.
func probesHold(in Input, f flowv1alpha1.Flow) bool {
	p := f.DependsOn.Probe
	for i := range p.HTTPGetList {
		if !in.Probes[ProbeRef{f.Name, HTTPGetProbe, i}] {
			return false
		}
	}
	for i := range p.TCPSocketList {
		if !in.Probes[ProbeRef{f.Name, TCPSocketProbe, i}] {
			return false
		}
	}
	return true
}
