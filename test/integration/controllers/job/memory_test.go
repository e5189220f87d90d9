//go:build integration

package job

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/test/poll"
)

// oomKill makes a running pod end as kwok ends an OOM-killed one.
func oomKill(t *testing.T, ns, name string) {
	t.Helper()
	patch := `{"metadata":{"annotations":{"pod.caldera.sh/run-duration":"10ms","pod.caldera.sh/exit-code":"137","pod.caldera.sh/exit-reason":"OOMKilled"}}}`
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := fw.Client.Patch(t.Context(), pod, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// TestOOMKilledTaskRestartsWithMoreMemory: each OOM kill doubles the task's
// memory (request and limit) up to the 1Gi cap, recorded in the Job's
// status and events, and the task's pods come back running with it; a kill
// at the cap fails the job.
func TestOOMKilledTaskRestartsWithMoreMemory(t *testing.T) {
	ns := namespace(t)
	w := task("w", 2, "", 0)
	w.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("200Mi")
	w.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("300Mi")}
	w.Policies = []batchv1alpha1.LifecyclePolicy{{
		Event: batchv1alpha1.OOMKilledEvent, Action: batchv1alpha1.RestartTaskWithMoreMemoryAction,
		MemoryScaling: &batchv1alpha1.MemoryScaling{IncreasePercent: 100, MaxMemory: resource.MustParse("1Gi")},
	}}
	create(t, newJob(ns, "oom", w, task("other", 1, "", 0)))
	waitPhase(t, ns, "oom", batchv1alpha1.JobRunning, 60*time.Second)
	before := waitRunningPods(t, ns, "oom", 3)

	for step, want := range []struct{ request, limit string }{{"400Mi", "600Mi"}, {"800Mi", "1Gi"}} {
		oomKill(t, ns, "oom-w-1")
		poll.Eventually(t, t.Context(), 60*time.Second, fmt.Sprintf("raise %d recorded", step+1), func() (bool, string) {
			st := getJob(t, ns, "oom").Status.MemoryScaling
			if len(st) != 1 || len(st[0].Containers) != 1 {
				return false, fmt.Sprint(st)
			}
			c := st[0].Containers[0]
			return st[0].Steps == int32(step+1) && c.Request.String() == want.request && c.Limit.String() == want.limit,
				fmt.Sprintf("step %d: %v/%v", st[0].Steps, c.Request, c.Limit)
		})
		poll.Eventually(t, t.Context(), 60*time.Second, "the task's pods running with the raised memory", func() (bool, string) {
			now := uids(t, ns, "oom")
			for _, p := range podsOf(t, ns, "oom") {
				if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
					return false, p.Name + " " + string(p.Status.Phase)
				}
				if p.Labels[batchv1alpha1.TaskSpecKey] != "w" {
					continue
				}
				res := p.Spec.Containers[0].Resources
				req, lim := res.Requests[corev1.ResourceMemory], res.Limits[corev1.ResourceMemory]
				if req.String() != want.request || lim.String() != want.limit {
					return false, fmt.Sprintf("%s with %s/%s", p.Name, req.String(), lim.String())
				}
			}
			return len(now) == 3, fmt.Sprint(now)
		})
		now := uids(t, ns, "oom")
		if now["oom-other-0"] != before["oom-other-0"] {
			t.Errorf("the other task's pod was restarted")
		}
		if j := getJob(t, ns, "oom"); j.Status.State.Phase != batchv1alpha1.JobRunning || j.Status.RetryCount != 0 {
			t.Errorf("job %s with retryCount %d, want Running with 0", j.Status.State.Phase, j.Status.RetryCount)
		}
	}
	if pg := podGroupOf(t, ns, "oom"); pg.Spec.MinResources == nil || pg.Spec.MinResources.Memory().String() != "1600Mi" {
		t.Errorf("PodGroup minResources = %v, want memory 2 × 800Mi = 1600Mi (the other task asks for none)", pg.Spec.MinResources)
	}
	waitEvent(t, ns, "oom", string(batchv1alpha1.MemoryRaisedReason), "request 400Mi → 800Mi, limit 600Mi → 1Gi (raise 2, cap 1Gi)")

	oomKill(t, ns, "oom-w-0")
	j := waitPhase(t, ns, "oom", batchv1alpha1.JobFailed, 60*time.Second)
	if want := "task w: container main of pod oom-w-0 was OOM-killed at the memory cap 1Gi"; j.Status.State.Reason != want {
		t.Errorf("reason = %q, want %q", j.Status.State.Reason, want)
	}
	waitEvent(t, ns, "oom", string(batchv1alpha1.MemoryAtCapReason), "at the memory cap 1Gi")
}

func waitEvent(t *testing.T, ns, job, reason, substr string) {
	t.Helper()
	poll.Eventually(t, t.Context(), 30*time.Second, "event "+reason, func() (bool, string) {
		var evs corev1.EventList
		if err := fw.Client.List(t.Context(), &evs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == job && e.Reason == reason {
				if strings.Contains(e.Message, substr) {
					return true, ""
				}
				seen = append(seen, e.Message)
			}
		}
		return false, fmt.Sprint(seen)
	})
}

func podGroupOf(t *testing.T, ns, job string) *schedulingv1beta1.PodGroup {
	t.Helper()
	var pgs schedulingv1beta1.PodGroupList
	if err := fw.Client.List(t.Context(), &pgs, client.InNamespace(ns), client.MatchingLabels{batchv1alpha1.JobNameKey: job}); err != nil {
		t.Fatal(err)
	}
	if len(pgs.Items) != 1 {
		t.Fatalf("%d PodGroups of job %s, want 1", len(pgs.Items), job)
	}
	return &pgs.Items[0]
}
