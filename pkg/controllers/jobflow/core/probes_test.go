package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
)

// serveThenLoad: "load" starts once the server task of "serve" answers an
// HTTP GET and its metrics port a TCP connection.
func serveThenLoad() *flowv1alpha1.JobFlow {
	return &flowv1alpha1.JobFlow{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "jf-uid"},
		Spec: flowv1alpha1.JobFlowSpec{Flows: []flowv1alpha1.Flow{
			{Name: "serve"},
			{Name: "load", DependsOn: &flowv1alpha1.DependsOn{Targets: []string{"serve"}, Probe: &flowv1alpha1.Probe{
				HTTPGetList:   []flowv1alpha1.HTTPGet{{TaskName: "server", Port: 8080, Path: "/healthz"}},
				TCPSocketList: []flowv1alpha1.TCPSocket{{TaskName: "server", Port: 9090}},
			}}},
		}},
	}
}

func TestProbes(t *testing.T) {
	tmpls := templates("serve", "load")
	httpRef, tcpRef := ProbeRef{"load", HTTPGetProbe, 0}, ProbeRef{"load", TCPSocketProbe, 0}

	// Nothing to ask while the target's Job does not exist.
	in := Input{Flow: serveThenLoad(), Templates: tmpls, Now: now}
	if got := ProbesToRun(in); len(got) != 0 {
		t.Errorf("probes before the target exists: %+v", got)
	}

	// Once it exists (running, not completed), both probes are asked of
	// its server task.
	in.Jobs = jobs(map[string]batchv1alpha1.JobPhase{"serve": batchv1alpha1.JobRunning})
	want := []ProbeRequest{
		{Ref: httpRef, Jobs: []string{"p-serve"}, TaskName: "server", Port: 8080, Path: "/healthz"},
		{Ref: tcpRef, Jobs: []string{"p-serve"}, TaskName: "server", Port: 9090},
	}
	if diff := cmp.Diff(want, ProbesToRun(in)); diff != "" {
		t.Errorf("probes (-want,+got):\n%s", diff)
	}

	for _, tc := range []struct {
		name    string
		probes  map[ProbeRef]bool
		create  string
		requeue bool
	}{
		{name: "no answer yet", requeue: true},
		{name: "only HTTP answered", probes: map[ProbeRef]bool{httpRef: true}, requeue: true},
		{name: "both answered", probes: map[ProbeRef]bool{httpRef: true, tcpRef: true}, create: "p-load"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in.Probes = tc.probes
			d := Decide(in)
			if got := names(d.Create); got != tc.create {
				t.Errorf("created %q, want %q", got, tc.create)
			}
			if (d.RequeueAfter == ProbePeriod) != tc.requeue {
				t.Errorf("requeue after %v, want a requeue: %v", d.RequeueAfter, tc.requeue)
			}
		})
	}

	// Once load's Job exists its probes are not asked again.
	in.Jobs = jobs(map[string]batchv1alpha1.JobPhase{"serve": batchv1alpha1.JobRunning, "load": batchv1alpha1.JobPending})
	if got := ProbesToRun(in); len(got) != 0 {
		t.Errorf("probes after the flow started: %+v", got)
	}
}
