package lifecycle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
)

func childJob(name, rj string, phase batchv1alpha1.JobPhase, running, succeeded, failed int32) batchv1alpha1.Job {
	return batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{trainingv1alpha1.ReplicatedJobNameLabel: rj}},
		Status:     batchv1alpha1.JobStatus{State: batchv1alpha1.JobState{Phase: phase}, Running: running, Succeeded: succeeded, Failed: failed},
	}
}

// TestAggregate: counts add up per replicated job; no final condition
// while a child runs; Failed naming the child that failed once all are
// done; Completed when all completed; the Planned condition kept.
func TestAggregate(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	hj := &trainingv1alpha1.HyperJob{
		ObjectMeta: metav1.ObjectMeta{Generation: 3},
		Spec:       trainingv1alpha1.HyperJobSpec{ReplicatedJobs: []trainingv1alpha1.ReplicatedJob{{Name: "train"}, {Name: "eval"}}},
		Status:     trainingv1alpha1.HyperJobStatus{Conditions: []metav1.Condition{{Type: ConditionPlanned, Status: metav1.ConditionTrue, Reason: ReasonPlanned}}},
	}
	plan := func(n int) *Record {
		rec := &Record{}
		for i, name := range []string{"hj-train-0", "hj-train-1", "hj-eval-0", "hj-eval-1"}[:n] {
			rj := "train"
			if i >= 2 {
				rj = "eval"
			}
			rec.Children = append(rec.Children, PlannedChild{Name: name, ReplicatedJob: rj, Cluster: []string{"east", "west"}[i%2]})
		}
		return rec
	}
	st := Aggregate(hj, plan(3), []batchv1alpha1.Job{
		childJob("hj-train-0", "train", batchv1alpha1.JobRunning, 8, 0, 0),
		childJob("hj-train-1", "train", batchv1alpha1.JobCompleted, 0, 8, 0),
		childJob("hj-eval-0", "eval", batchv1alpha1.JobFailed, 0, 0, 1),
	}, now)
	if got := []int32{st.ReplicatedJobsStatus[0].Running, st.ReplicatedJobsStatus[0].Succeeded, st.ReplicatedJobsStatus[1].Failed}; !cmp.Equal(got, []int32{8, 8, 1}) {
		t.Errorf("counts %v", got)
	}
	if got := st.ReplicatedJobsStatus[0].JobClusters; len(got) != 2 || got["hj-train-1"] != "west" {
		t.Errorf("clusters %v", got)
	}
	if len(st.ReplicatedJobsStatus[0].JobStates) != 2 || *st.SplitCount != 3 || st.ObservedGeneration != 3 {
		t.Errorf("status %+v", st)
	}
	if meta.FindStatusCondition(st.Conditions, trainingv1alpha1.HyperJobFailed) != nil || meta.FindStatusCondition(st.Conditions, ConditionPlanned) == nil {
		t.Errorf("conditions while a child runs: %+v", st.Conditions)
	}
	// Two of three children running or done: Pending, unless two are
	// enough.
	if st.Phase != trainingv1alpha1.HyperJobPending {
		t.Errorf("phase %s with 2 of 3 children running or done", st.Phase)
	}
	two := plan(3)
	two.MinAvailable = 2
	if st := Aggregate(hj, two, []batchv1alpha1.Job{
		childJob("hj-train-0", "train", batchv1alpha1.JobRunning, 8, 0, 0),
		childJob("hj-train-1", "train", batchv1alpha1.JobCompleted, 0, 8, 0),
		childJob("hj-eval-0", "eval", batchv1alpha1.JobPending, 0, 0, 0),
	}, now); st.Phase != trainingv1alpha1.HyperJobRunning {
		t.Errorf("phase %s with minAvailable 2 and 2 running or done", st.Phase)
	}

	done := []batchv1alpha1.Job{
		childJob("hj-train-0", "train", batchv1alpha1.JobCompleted, 0, 8, 0),
		childJob("hj-train-1", "train", batchv1alpha1.JobCompleted, 0, 8, 0),
		childJob("hj-eval-0", "eval", batchv1alpha1.JobFailed, 0, 0, 1),
	}
	st = Aggregate(hj, plan(3), done, now)
	if c := meta.FindStatusCondition(st.Conditions, trainingv1alpha1.HyperJobFailed); c == nil || c.Status != metav1.ConditionTrue || c.Message != "1 of 3 child jobs did not complete: hj-eval-0" {
		t.Errorf("Failed: %+v", c)
	}
	if c := meta.FindStatusCondition(st.Conditions, trainingv1alpha1.HyperJobCompleted); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Completed: %+v", c)
	}
	if st.Phase != trainingv1alpha1.HyperJobFailedPhase {
		t.Errorf("phase %s with a child failed and all finished", st.Phase)
	}
	done[2] = childJob("hj-eval-0", "eval", batchv1alpha1.JobCompleted, 0, 1, 0)
	st = Aggregate(hj, plan(3), done, now)
	if c := meta.FindStatusCondition(st.Conditions, trainingv1alpha1.HyperJobCompleted); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Completed: %+v", c)
	}
	if st.Phase != trainingv1alpha1.HyperJobCompletedPhase {
		t.Errorf("phase %s with all completed", st.Phase)
	}
	// A planned child not seen yet keeps the HyperJob unfinished.
	if st := Aggregate(hj, plan(4), done, now); meta.FindStatusCondition(st.Conditions, trainingv1alpha1.HyperJobCompleted) != nil {
		t.Errorf("completed with a planned child missing")
	}
}
