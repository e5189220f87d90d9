package job

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// TestGoals: what --wait of run, resume and suspend makes of each phase.
func TestGoals(t *testing.T) {
	type verdict struct {
		Done bool
		Err  string
	}
	phases := []batchv1alpha1.JobPhase{"", batchv1alpha1.JobPending, batchv1alpha1.JobRunning, batchv1alpha1.JobRestarting,
		batchv1alpha1.JobAborting, batchv1alpha1.JobAborted, batchv1alpha1.JobCompleting, batchv1alpha1.JobCompleted,
		batchv1alpha1.JobTerminating, batchv1alpha1.JobTerminated, batchv1alpha1.JobFailed}
	waiting := verdict{}
	done := verdict{Done: true}
	ends := func(phase string) verdict {
		return verdict{Done: true, Err: "job ns/j is " + phase + " (Why: it says so)"}
	}
	cases := map[string]struct {
		g    goal
		want map[batchv1alpha1.JobPhase]verdict
	}{
		"run": {g: runningOrEnded(true), want: map[batchv1alpha1.JobPhase]verdict{
			batchv1alpha1.JobRunning: done, batchv1alpha1.JobCompleted: done, batchv1alpha1.JobAborted: ends("Aborted"),
			batchv1alpha1.JobTerminated: ends("Terminated"), batchv1alpha1.JobFailed: ends("Failed"),
		}},
		"resume": {g: runningOrEnded(false), want: map[batchv1alpha1.JobPhase]verdict{
			batchv1alpha1.JobRunning: done, batchv1alpha1.JobCompleted: done,
			batchv1alpha1.JobTerminated: ends("Terminated"), batchv1alpha1.JobFailed: ends("Failed"),
		}},
		"suspend": {g: aborted, want: map[batchv1alpha1.JobPhase]verdict{
			batchv1alpha1.JobAborted: done, batchv1alpha1.JobCompleted: ends("Completed"),
			batchv1alpha1.JobTerminated: ends("Terminated"), batchv1alpha1.JobFailed: ends("Failed"),
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := map[batchv1alpha1.JobPhase]verdict{}
			want := map[batchv1alpha1.JobPhase]verdict{}
			for _, p := range phases {
				j := &batchv1alpha1.Job{}
				j.Namespace, j.Name = "ns", "j"
				j.Status.State = batchv1alpha1.JobState{Phase: p, Reason: "Why", Message: "it says so"}
				d, err := tc.g(j)
				v := verdict{Done: d}
				if err != nil {
					v.Err = err.Error()
				}
				got[p] = v
				want[p] = waiting
				if w, ok := tc.want[p]; ok {
					want[p] = w
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verdicts by phase (-want,+got):\n%s", diff)
			}
		})
	}
}
