package narrate

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
)

func event(kind, name, reason, msg string, at time.Time) corev1.Event {
	return corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name}, Reason: reason, Message: msg, LastTimestamp: metav1.NewTime(at)}
}

// TestJobOnKarmada: a job held by caldera-global is explained by the
// latest hold; its closed queue is said.
func TestJobOnKarmada(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := &Facts{
		Now: now,
		Job: &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "big"},
			Spec:   batchv1alpha1.JobSpec{MinAvailable: 2, Tasks: []batchv1alpha1.TaskSpec{{Name: "w", Replicas: 2}}},
			Status: batchv1alpha1.JobStatus{State: batchv1alpha1.JobState{Phase: batchv1alpha1.JobPending, LastTransitionTime: metav1.NewTime(now.Add(-3 * time.Minute))}}},
		Queue:   &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "ml"}, Status: schedulingv1beta1.QueueStatus{State: schedulingv1beta1.QueueStateClosed}},
		Binding: &workv1alpha2.ResourceBinding{Spec: workv1alpha2.ResourceBindingSpec{Suspension: &workv1alpha2.Suspension{Scheduling: new(true)}}},
		Events: []corev1.Event{
			event("Job", "big", "NoClusterFits", "held: no cluster has 8 nvidia.com/gpu free (member-a has 4)", now.Add(-2*time.Minute)),
			event("Job", "big", "QueueCapability", "held: queue ml over its capability by nvidia.com/gpu 4", now.Add(-time.Minute)),
			event("Job", "big", "Dispatched", "released", now.Add(-10*time.Minute)),
		},
	}
	got := strings.Join(Job(f), "\n")
	want := `Job ml/big is Pending (for 3m).
Of its 2 pods (2 needed to start), 0 are pending, 0 running, 0 succeeded, 0 failed.
caldera-global holds it (QueueCapability): queue ml over its capability by nvidia.com/gpu 4.
Its queue ml is Closed: no new job is admitted to it.`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Placed by caldera-global: the suspension stays, the cluster is set.
	f.Binding.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member-b"}}
	if got := Job(f); got[2] != "caldera-global placed it in member-b." {
		t.Errorf("placed: %q", got[2])
	}
	f.Binding.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "member-b", AppliedMessage: `jobs.batch.volcano.sh "big" is forbidden: exceeded quota.`}}
	if got := Job(f); got[3] != `member-b has not accepted it: jobs.batch.volcano.sh "big" is forbidden: exceeded quota.` {
		t.Errorf("refused: %q", got[3])
	}
	f.Binding.Status.AggregatedStatus = nil
	f.Binding.Spec.Suspension.Scheduling = new(false)
	if got := Job(f); got[2] != "caldera-global released it; Karmada placed it in member-b." {
		t.Errorf("released: %q", got[2])
	}
}

// TestPodGroupAndPods: the scheduler's condition, with how long it holds,
// and the pods' FailedScheduling events summed up.
func TestPodGroupAndPods(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := &Facts{
		Now: now,
		PodGroup: &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "pg"},
			Spec: schedulingv1beta1.PodGroupSpec{MinMember: 4, Queue: "ml"},
			Status: schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupInqueue, Conditions: []schedulingv1beta1.PodGroupCondition{{
				Type: schedulingv1beta1.PodGroupUnschedulableType, Status: corev1.ConditionTrue, Reason: "NotEnoughResources",
				Message: "2 of 4 tasks placeable.", LastTransitionTime: metav1.NewTime(now.Add(-90 * time.Second))}}}},
		Events: []corev1.Event{
			event("Pod", "pg-w-0", "FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu", now.Add(-time.Minute)),
			event("Pod", "pg-w-1", "FailedScheduling", "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) were unschedulable", now),
			event("Pod", "pg-w-1", "Scheduled", "bound", now.Add(-time.Hour)),
		},
	}
	got := strings.Join(Job(f), "\n")
	want := `PodGroup ml/pg is Inqueue, in queue ml; it needs 4 pods placed together.
The scheduler cannot place it (NotEnoughResources, for 90s): 2 of 4 tasks placeable.
2 of its pods were not scheduled; the latest says: 0/3 nodes are available: 2 Insufficient cpu, 1 node(s) were unschedulable.`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestJobTheControllerCannotStart: the job controller's Warning is the
// reason a job has not started.
func TestJobTheControllerCannotStart(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	refused := event("Job", "mpi", "FailedCreate", `creating pod mpi-master-0: pods "mpi-master-0" is forbidden: exceeded quota: pods.`, now.Add(-time.Minute))
	refused.Type = corev1.EventTypeWarning
	f := &Facts{
		Now: now,
		Job: &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "mpi"},
			Spec: batchv1alpha1.JobSpec{MinAvailable: 3, Tasks: []batchv1alpha1.TaskSpec{{Name: "master", Replicas: 1}, {Name: "worker", Replicas: 2}}}},
		Events: []corev1.Event{refused},
	}
	got := strings.Join(Job(f), "\n")
	want := `Job ml/mpi is not started by the job controller yet.
Of its 3 pods (3 needed to start), 0 are pending, 0 running, 0 succeeded, 0 failed.
The job controller cannot start it (FailedCreate, 60s ago): creating pod mpi-master-0: pods "mpi-master-0" is forbidden: exceeded quota: pods.
It has no PodGroup yet: the job controller makes one when it starts the job.`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Running, the old Warning is history.
	f.Job.Status.State.Phase = batchv1alpha1.JobRunning
	if got := strings.Join(Job(f), "\n"); strings.Contains(got, "cannot start") {
		t.Errorf("a running job explained with an old Warning:\n%s", got)
	}
}
