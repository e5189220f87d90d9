package podfit

import (
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// fromUpstream converts a kube-scheduler status to the framework's, code
// for code; nil and success give nil. A code the framework does not know
// is an Error: nothing is evicted to cure it.
func fromUpstream(st *fwk.Status) *framework.Status {
	if st.IsSuccess() {
		return nil
	}
	s := &framework.Status{Plugin: st.Plugin(), Reasons: st.Reasons()}
	switch st.Code() {
	case fwk.Unschedulable:
		s.Code = framework.Unschedulable
	case fwk.UnschedulableAndUnresolvable:
		s.Code = framework.UnschedulableAndUnresolvable
	case fwk.Pending:
		s.Code = framework.Pending
	case fwk.Wait:
		s.Code = framework.Wait
	default:
		s.Code = framework.Error
	}
	return s
}

func errorStatus(plugin string, err error) *framework.Status {
	return &framework.Status{Plugin: plugin, Code: framework.Error, Reasons: []string{err.Error()}}
}
