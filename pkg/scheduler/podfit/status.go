package podfit

import (
	"strings"

	fwk "k8s.io/kube-scheduler/framework"
)

// Code says how a pod failed to fit.
type Code int

const (
	// Unschedulable: the node does not fit now; evicting pods from it may
	// change that (insufficient resources, anti-affinity of running pods).
	Unschedulable Code = iota + 1
	// UnschedulableAndUnresolvable: evicting pods cannot help (node
	// affinity, taints, volume topology, node name).
	UnschedulableAndUnresolvable
	// Pending: the pod waits for something outside the scheduler.
	Pending
	// Error: a plugin failed; the answer is unknown.
	Error
)

var codeNames = [...]string{"Success", "Unschedulable", "UnschedulableAndUnresolvable", "Pending", "Error"}

func (c Code) String() string {
	if int(c) >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Invalid"
}

// Status is why a pod does not fit a node, or why a step failed. A nil
// *Status means success. Statuses are shared and must not be changed.
type Status struct {
	// Plugin is the kube-scheduler plugin that decided, e.g.
	// "NodeResourcesFit".
	Plugin string
	Code   Code
	// Reasons are the plugin's messages, e.g. "Insufficient nvidia.com/gpu";
	// for Code Error the first one is the error.
	Reasons []string
}

// Message joins the plugin and its reasons:
// "NodeResourcesFit: Insufficient cpu, Insufficient memory".
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	msg := strings.Join(s.Reasons, ", ")
	if s.Plugin == "" {
		return msg
	}
	if msg == "" {
		return s.Plugin
	}
	return s.Plugin + ": " + msg
}

func (s *Status) String() string { return s.Message() }

// IsRejected reports whether the pod does not fit (as opposed to success or
// an error).
func (s *Status) IsRejected() bool {
	return s != nil && s.Code != Error
}

// Unresolvable reports whether evicting pods from the node cannot help.
func (s *Status) Unresolvable() bool {
	return s != nil && s.Code == UnschedulableAndUnresolvable
}

// fromUpstream converts a kube-scheduler status; nil and success give nil.
func fromUpstream(st *fwk.Status) *Status {
	if st.IsSuccess() {
		return nil
	}
	s := &Status{Plugin: st.Plugin(), Reasons: st.Reasons()}
	switch st.Code() {
	case fwk.Unschedulable:
		s.Code = Unschedulable
	case fwk.UnschedulableAndUnresolvable:
		s.Code = UnschedulableAndUnresolvable
	case fwk.Pending:
		s.Code = Pending
	default:
		s.Code = Error
	}
	return s
}

func errorStatus(plugin string, err error) *Status {
	return &Status{Plugin: plugin, Code: Error, Reasons: []string{err.Error()}}
}
