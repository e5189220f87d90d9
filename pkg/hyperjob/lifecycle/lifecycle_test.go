package lifecycle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
)

func children(phases ...batchv1alpha1.JobPhase) []Child {
	names := []string{"a", "b", "c", "d"}
	out := make([]Child, len(phases))
	for i, p := range phases {
		out[i] = Child{Name: names[i], Phase: p}
	}
	return out
}

func TestOnFailure(t *testing.T) {
	two := int32(2)
	policy := func(a trainingv1alpha1.FailureAction) *trainingv1alpha1.FailurePolicy {
		return &trainingv1alpha1.FailurePolicy{Action: a, MaxRetry: &two}
	}
	mixed := children(batchv1alpha1.JobRunning, batchv1alpha1.JobFailed, batchv1alpha1.JobCompleted, batchv1alpha1.JobAborted)
	for _, c := range []struct {
		name     string
		fp       *trainingv1alpha1.FailurePolicy
		retries  int32
		children []Child
		want     FailureDecision
	}{
		{name: "no policy", children: mixed},
		{name: "nothing failed", fp: policy(trainingv1alpha1.RestartAll), children: children(batchv1alpha1.JobRunning, batchv1alpha1.JobCompleted)},
		{name: "restart the failed children", fp: policy(trainingv1alpha1.RestartChild), children: mixed, want: FailureDecision{
			Action: RestartChildren, Failed: []string{"b", "d"}, Delete: []string{"b", "d"}, Restart: 1, MaxRetry: 2,
			Message: "child b, d failed: making it again (restart 1 of 2)"}},
		{name: "restart all", fp: policy(trainingv1alpha1.RestartAll), retries: 1, children: mixed, want: FailureDecision{
			Action: RestartAll, Failed: []string{"b", "d"}, Delete: []string{"a", "b", "c", "d"}, Restart: 2, MaxRetry: 2,
			Message: "child b, d failed: all children deleted, the HyperJob is planned again (restart 2 of 2)"}},
		{name: "out of restarts", fp: policy(trainingv1alpha1.RestartAll), retries: 2, children: mixed, want: FailureDecision{
			Action: Fail, Failed: []string{"b", "d"}, Delete: []string{"a"}, MaxRetry: 2,
			Message: "child b, d failed and the failure policy (RestartAll, 2 of 2 restarts used) fails the HyperJob"}},
		{name: "fail", fp: &trainingv1alpha1.FailurePolicy{Action: trainingv1alpha1.Fail}, children: mixed, want: FailureDecision{
			Action: Fail, Failed: []string{"b", "d"}, Delete: []string{"a"}, MaxRetry: int32(trainingv1alpha1.DefaultHyperJobMaxRetry),
			Message: "child b, d failed and the failure policy (Fail, 0 of 3 restarts used) fails the HyperJob"}},
		{name: "a lost child restarts all", fp: policy(trainingv1alpha1.RestartChild), children: []Child{
			{Name: "a", Phase: batchv1alpha1.JobRunning}, {Name: "b", Phase: batchv1alpha1.JobFailed, Lost: "member west NotReady for 5m0s"}},
			want: FailureDecision{Action: RestartAll, Failed: []string{"b"}, Delete: []string{"a", "b"}, Restart: 1, MaxRetry: 2,
				Message: "child b lost with its member (member west NotReady for 5m0s): all children deleted, the HyperJob is planned again (restart 1 of 2)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, OnFailure(c.fp, c.retries, c.children)); diff != "" {
				t.Errorf("decision (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestStart(t *testing.T) {
	kids := children(batchv1alpha1.JobRunning, batchv1alpha1.JobPending, batchv1alpha1.JobCompleted)
	for _, c := range []struct {
		name     string
		need     int
		released time.Duration
		want     StartDecision
	}{
		{name: "enough run", need: 2, released: time.Hour, want: StartDecision{Started: true}},
		{name: "waiting", need: 3, released: 4 * time.Minute, want: StartDecision{Wait: 6 * time.Minute}},
		{name: "timed out", need: 3, released: 10 * time.Minute, want: StartDecision{RollBack: true,
			Message: "2 of 3 child jobs ran within 10m0s of their release; all were deleted and the HyperJob is planned again"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, Start(c.need, kids, c.released, 10*time.Minute)); diff != "" {
				t.Errorf("decision (-want,+got):\n%s", diff)
			}
		})
	}
}
