package api

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func pendingPod(name string, req corev1.ResourceList) *corev1.Pod {
	p := testPod(name, req)
	p.Status.Phase = corev1.PodPending
	return p
}

// TestBestEffortPendingFollowsTasks: the count of pending best-effort
// tasks, which the backfill action reads instead of walking each job's
// tasks, moves with every add, status change, removal and copy.
func TestBestEffortPendingFollowsTasks(t *testing.T) {
	job := NewJobInfo("ns/j")
	be1 := NewTaskInfo(pendingPod("be1", nil), job.UID)
	be2 := NewTaskInfo(pendingPod("be2", nil), job.UID)
	req := NewTaskInfo(pendingPod("req", rl("cpu", "1")), job.UID)
	if !be1.BestEffort || req.BestEffort {
		t.Fatalf("precondition: BestEffort %v and %v, want true and false", be1.BestEffort, req.BestEffort)
	}
	steps := []struct {
		name string
		do   func()
		want int32
	}{
		{"a task with requests added", func() { job.AddTask(req) }, 0},
		{"two best-effort tasks added", func() { job.AddTask(be1); job.AddTask(be2) }, 2},
		{"one allocated", func() { job.SetTaskStatus(be1, Allocated) }, 1},
		{"the one with requests allocated", func() { job.SetTaskStatus(req, Allocated) }, 1},
		{"the allocation undone", func() { job.SetTaskStatus(be1, Pending) }, 2},
		{"one removed", func() { job.RemoveTask(be2) }, 1},
		{"removed again", func() { job.RemoveTask(be2) }, 1},
		{"the last bound", func() { job.SetTaskStatus(be1, Bound) }, 0},
	}
	for _, s := range steps {
		s.do()
		if got := job.BestEffortPending(); got != s.want {
			t.Fatalf("%s: %d pending best-effort tasks, want %d", s.name, got, s.want)
		}
	}
	job.SetTaskStatus(be1, Pending)
	c := job.Clone()
	c.SetTaskStatus(c.Tasks[be1.UID], Allocated)
	if job.BestEffortPending() != 1 || c.BestEffortPending() != 0 {
		t.Errorf("after a copy's task moved: original %d, copy %d; want 1 and 0", job.BestEffortPending(), c.BestEffortPending())
	}
}
