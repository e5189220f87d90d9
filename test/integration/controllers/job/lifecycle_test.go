//go:build integration

package job

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	"github.com/caldera-sh/caldera/test/poll"
)

func policy(action busv1alpha1.Action, event batchv1alpha1.Event) batchv1alpha1.LifecyclePolicy {
	return batchv1alpha1.LifecyclePolicy{Action: action, Event: event}
}

func TestJobCompletesWhenEveryPodSucceeds(t *testing.T) {
	ns := namespace(t)
	create(t, newJob(ns, "ok", task("w", 3, "1s", 0)))
	j := waitPhase(t, ns, "ok", batchv1alpha1.JobCompleted, 60*time.Second)
	if j.Status.Succeeded != 3 {
		t.Errorf("succeeded = %d, want 3", j.Status.Succeeded)
	}
	pods := podsOf(t, ns, "ok")
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3 (succeeded pods are kept)", len(pods))
	}
	p := pods[0]
	for _, k := range []string{"volcano.sh/job-name", "volcano.sh/task-spec", "volcano.sh/task-index", "scheduling.k8s.io/group-name", "volcano.sh/job-version"} {
		if p.Annotations[k] == "" {
			t.Errorf("pod %s lacks annotation %s", p.Name, k)
		}
	}
	if p.Annotations["scheduling.k8s.io/group-name"] != "ok-"+string(j.UID) {
		t.Errorf("pod group annotation = %q", p.Annotations["scheduling.k8s.io/group-name"])
	}
}

func TestMinSuccessCompletesTheJob(t *testing.T) {
	ns := namespace(t)
	j := newJob(ns, "ms", task("fast", 3, "1s", 0), task("slow", 7, "", 0))
	j.Spec.MinAvailable = 1
	j.Spec.MinSuccess = ptr.To[int32](3)
	create(t, j)
	got := waitPhase(t, ns, "ms", batchv1alpha1.JobCompleted, 60*time.Second)
	if got.Status.Succeeded != 3 {
		t.Errorf("succeeded = %d, want 3", got.Status.Succeeded)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the still running pods removed", func() (bool, string) {
		n := 0
		for _, p := range podsOf(t, ns, "ms") {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				n++
			}
		}
		return n == 0, fmt.Sprintf("%d running", n)
	})
}

func TestPodFailedRestartsUntilMaxRetry(t *testing.T) {
	ns := namespace(t)
	j := newJob(ns, "retry", task("w", 2, "1s", 1))
	j.Spec.MaxRetry = 2
	j.Spec.Policies = []batchv1alpha1.LifecyclePolicy{policy(busv1alpha1.RestartJobAction, batchv1alpha1.PodFailedEvent)}
	create(t, j)
	got := waitPhase(t, ns, "retry", batchv1alpha1.JobFailed, 90*time.Second)
	if got.Status.RetryCount != 2 {
		t.Errorf("retryCount = %d, want 2", got.Status.RetryCount)
	}
	var restarted int
	for _, c := range got.Status.Conditions {
		if c.Status == batchv1alpha1.JobRestarting {
			restarted++
		}
	}
	if restarted != 2 {
		t.Errorf("restarting %d times in the conditions, want 2: %+v", restarted, got.Status.Conditions)
	}
}

func TestExitCodePolicy(t *testing.T) {
	ns := namespace(t)
	j := newJob(ns, "exit", task("w", 2, "1s", 3))
	j.Spec.Policies = []batchv1alpha1.LifecyclePolicy{{Action: busv1alpha1.AbortJobAction, ExitCode: ptr.To[int32](3)}}
	create(t, j)
	waitPhase(t, ns, "exit", batchv1alpha1.JobAborted, 60*time.Second)
}

func TestTaskCompletedCompletesTheJob(t *testing.T) {
	ns := namespace(t)
	master := task("master", 1, "1s", 0)
	master.Policies = []batchv1alpha1.LifecyclePolicy{policy(busv1alpha1.CompleteJobAction, batchv1alpha1.TaskCompletedEvent)}
	create(t, newJob(ns, "tc", master, task("worker", 2, "", 0)))
	waitPhase(t, ns, "tc", batchv1alpha1.JobCompleted, 60*time.Second)
}

func TestPodPendingTimeout(t *testing.T) {
	ns := namespace(t)
	stuck := task("stuck", 1, "", 0)
	stuck.Template.Spec.NodeSelector = map[string]string{"no-such": "node"}
	stuck.MinAvailable = ptr.To[int32](0)
	j := newJob(ns, "pending", task("ok", 1, "", 0), stuck)
	j.Spec.MinAvailable = 1
	j.Spec.Policies = []batchv1alpha1.LifecyclePolicy{{Action: busv1alpha1.AbortJobAction, Event: batchv1alpha1.PodPendingEvent,
		Timeout: &metav1.Duration{Duration: 3 * time.Second}}}
	create(t, j)
	waitPhase(t, ns, "pending", batchv1alpha1.JobRunning, 60*time.Second)
	waitPhase(t, ns, "pending", batchv1alpha1.JobAborted, 60*time.Second)
}

func TestPodEvictedRestartsTheJob(t *testing.T) {
	ns := namespace(t)
	j := newJob(ns, "evict", task("w", 2, "", 0))
	j.Spec.Policies = []batchv1alpha1.LifecyclePolicy{policy(busv1alpha1.RestartJobAction, batchv1alpha1.PodEvictedEvent)}
	create(t, j)
	waitPhase(t, ns, "evict", batchv1alpha1.JobRunning, 60*time.Second)
	// kwok removes deleted pods at once; a finalizer keeps the evicted pod
	// visible, as a kubelet stopping its containers would.
	// Merge patches, not updates: kwok and the controllers write the pod
	// meanwhile, and an update would then fail on a conflict.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evict-w-0"}}
	hold := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":["test.caldera.sh/hold"]}}`))
	if err := fw.Client.Patch(t.Context(), pod, hold); err != nil {
		t.Fatal(err)
	}
	if err := fw.Client.SubResource("eviction").Create(t.Context(), pod, &policyv1.Eviction{}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 60*time.Second, "restart after the eviction", func() (bool, string) {
		j := getJob(t, ns, "evict")
		return j.Status.RetryCount == 1, fmt.Sprintf("phase %s retry %d", j.Status.State.Phase, j.Status.RetryCount)
	})
	// Let the held pod go.
	release := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	if err := fw.Client.Patch(t.Context(), pod, release); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	waitPhase(t, ns, "evict", batchv1alpha1.JobRunning, 60*time.Second)
}

func TestTTLDeletesAFinishedJob(t *testing.T) {
	ns := namespace(t)
	j := newJob(ns, "ttl", task("w", 1, "1s", 0))
	j.Spec.TTLSecondsAfterFinished = ptr.To[int32](2)
	create(t, j)
	waitPhase(t, ns, "ttl", batchv1alpha1.JobCompleted, 60*time.Second)
	poll.Eventually(t, t.Context(), 30*time.Second, "the job deleted after its TTL", func() (bool, string) {
		var got batchv1alpha1.Job
		err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "ttl"}, &got)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

func TestDependsOnOrdersTasks(t *testing.T) {
	ns := namespace(t)
	worker := task("worker", 2, "", 0)
	worker.DependsOn = &batchv1alpha1.DependsOn{Name: []string{"master"}}
	j := newJob(ns, "dep", task("master", 1, "", 0), worker)
	j.Spec.MinAvailable = 1
	create(t, j)
	waitPhase(t, ns, "dep", batchv1alpha1.JobRunning, 60*time.Second)
	poll.Eventually(t, t.Context(), 60*time.Second, "workers created", func() (bool, string) {
		return len(podsOf(t, ns, "dep")) == 3, fmt.Sprintf("%d pods", len(podsOf(t, ns, "dep")))
	})
	var masterRunning time.Time
	pods := podsOf(t, ns, "dep")
	for _, p := range pods {
		if p.Name == "dep-master-0" && p.Status.StartTime != nil {
			masterRunning = p.Status.StartTime.Time
		}
	}
	for _, p := range pods {
		if p.Annotations["volcano.sh/task-spec"] == "worker" && p.CreationTimestamp.Time.Before(masterRunning.Truncate(time.Second)) {
			t.Errorf("worker %s created at %s, before the master ran at %s", p.Name, p.CreationTimestamp, masterRunning)
		}
	}
}

func TestCommandsAbortAndResume(t *testing.T) {
	ns := namespace(t)
	create(t, newJob(ns, "cmd", task("w", 2, "", 0)))
	j := waitPhase(t, ns, "cmd", batchv1alpha1.JobRunning, 60*time.Second)
	command := func(name string, action busv1alpha1.Action) {
		create(t, &busv1alpha1.Command{
			ObjectMeta:   metav1.ObjectMeta{Namespace: ns, Name: name},
			Action:       string(action),
			TargetObject: &metav1.OwnerReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "cmd", UID: j.UID},
		})
	}
	command("abort", busv1alpha1.AbortJobAction)
	waitPhase(t, ns, "cmd", batchv1alpha1.JobAborted, 60*time.Second)
	poll.Eventually(t, t.Context(), 30*time.Second, "the command consumed", func() (bool, string) {
		var c busv1alpha1.Command
		err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "abort"}, &c)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	command("resume", busv1alpha1.ResumeJobAction)
	got := waitPhase(t, ns, "cmd", batchv1alpha1.JobRunning, 60*time.Second)
	if got.Status.RetryCount != 1 {
		t.Errorf("retryCount after resume = %d, want 1", got.Status.RetryCount)
	}
}
