package core

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	bt "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// oomKilled marks p failed with its first container OOM-killed.
func oomKilled(p *corev1.Pod, uid types.UID) *corev1.Pod {
	p.UID = uid
	p.Status.Phase = corev1.PodFailed
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: metav1.NewTime(t0)},
	}}}
	return p
}

func memOf(p *corev1.Pod) (string, string) {
	c := p.Spec.Containers[0]
	req, lim := c.Resources.Requests[corev1.ResourceMemory], c.Resources.Limits[corev1.ResourceMemory]
	return req.String(), lim.String()
}

func hasEvent(d Decision, reason, substr string) bool {
	for _, e := range d.Events {
		if e.Reason == reason && strings.Contains(e.Message, substr) {
			return true
		}
	}
	return false
}

func oomJob(w *bt.JobWrapper) *batchv1alpha1.Job {
	return withPhase(defaulted(w), batchv1alpha1.JobRunning)
}

// TestOOMKilledRaisesMemory walks a task through OOM kills: each raises the
// killed container's memory by the policy's percentage, records it in
// status before any pod is deleted, restarts the task's unfinished pods
// with it, and fails the job once a kill happens at the cap.
func TestOOMKilledRaisesMemory(t *testing.T) {
	R, S := corev1.PodRunning, corev1.PodSucceeded
	job := oomJob(bt.MakeJob("j", "ns").
		Task(bt.MakeTask("w", 3).Memory("1Gi", "2Gi").Policy(bt.OnOOMKilled(50, "4Gi"))))

	// 1. w-1 is OOM-killed: memory goes 1Gi/2Gi -> 1536Mi/3Gi.
	ps := pods(job, 0, R, R, S)
	oomKilled(ps[1], "uid-a")
	d := Decide(Input{Job: job, Pods: ps, PodGroup: pg(schedulingv1beta1.PodGroupRunning), Now: t0})
	check(t, d, want{phase: batchv1alpha1.JobRunning, first: true, del: []string{"j-w-0", "j-w-1"}})
	wantRec := []batchv1alpha1.TaskMemoryScaling{{
		Task: "w", Steps: 1, LastPod: "j-w-1", LastPodUID: "uid-a", LastTransitionTime: metav1.NewTime(t0),
		Containers: []batchv1alpha1.ContainerMemory{{Name: ps[0].Spec.Containers[0].Name,
			Request: ptrQ("1536Mi"), Limit: ptrQ("3Gi")}},
	}}
	if diff := cmp.Diff(wantRec, d.Status.MemoryScaling); diff != "" {
		t.Fatalf("memoryScaling (-want,+got):\n%s", diff)
	}
	if !hasEvent(d, "MemoryRaised", "request 1Gi → 1536Mi, limit 2Gi → 3Gi (raise 1, cap 4Gi)") {
		t.Errorf("no MemoryRaised event with the change: %+v", d.Events)
	}
	if got := d.PodGroup.Spec.MinResources.Memory().String(); got != "4608Mi" {
		t.Errorf("PodGroup minResources memory = %s, want 3 × 1536Mi = 4608Mi", got)
	}

	// 2. Restarted before the deletes landed: the OOM kill is not counted
	// again, the stale pods are still deleted.
	job.Status = d.Status
	d = Decide(Input{Job: job, Pods: ps, PodGroup: pg(schedulingv1beta1.PodGroupRunning), Now: t0})
	check(t, d, want{phase: batchv1alpha1.JobRunning, del: []string{"j-w-0", "j-w-1"}})
	if d.Status.MemoryScaling[0].Steps != 1 {
		t.Errorf("steps = %d after a repeated look at the same kill, want 1", d.Status.MemoryScaling[0].Steps)
	}

	// 3. Once they are gone, they come back with the raised memory; the
	// succeeded pod stays.
	d = Decide(Input{Job: job, Pods: ps[2:], PodGroup: pg(schedulingv1beta1.PodGroupRunning), Now: t0})
	check(t, d, want{phase: batchv1alpha1.JobRunning, create: []string{"j-w-0", "j-w-1"}})
	for _, p := range d.CreatePods {
		if req, lim := memOf(p); req != "1536Mi" || lim != "3Gi" {
			t.Errorf("%s created with %s/%s, want 1536Mi/3Gi", p.Name, req, lim)
		}
	}

	// 4. Killed again: the limit is capped at 4Gi.
	again := append(d.CreatePods, ps[2])
	again[0].Status.Phase = R
	oomKilled(again[1], "uid-b")
	d = Decide(Input{Job: job, Pods: again, PodGroup: pg(schedulingv1beta1.PodGroupRunning), Now: t0})
	check(t, d, want{phase: batchv1alpha1.JobRunning, first: true, del: []string{"j-w-0", "j-w-1"}})
	if c := d.Status.MemoryScaling[0].Containers[0]; c.Request.String() != "2304Mi" || c.Limit.String() != "4Gi" || d.Status.MemoryScaling[0].Steps != 2 {
		t.Errorf("second raise = %s/%s (step %d), want 2304Mi/4Gi (step 2)", c.Request, c.Limit, d.Status.MemoryScaling[0].Steps)
	}

	// 5. Killed at the cap: the job fails and says why.
	job.Status = d.Status
	atCap := []*corev1.Pod{BuildPod(job, 0, 0, nil), BuildPod(job, 0, 1, nil), ps[2]}
	atCap[0].Status.Phase = R
	oomKilled(atCap[1], "uid-c")
	d = Decide(Input{Job: job, Pods: atCap, PodGroup: pg(schedulingv1beta1.PodGroupRunning), Now: t0})
	check(t, d, want{phase: batchv1alpha1.JobFailed, first: true, noPG: true, del: []string{"j-w-0"}})
	if !hasEvent(d, "MemoryAtCap", "OOM-killed at the memory cap 4Gi") || !strings.Contains(d.Status.State.Reason, "memory cap") {
		t.Errorf("at the cap: events %+v, reason %q", d.Events, d.Status.State.Reason)
	}
}

func ptrQ(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

func TestOOMKilledPolicies(t *testing.T) {
	R := corev1.PodRunning
	task := func() *bt.TaskWrapper { return bt.MakeTask("w", 2).Memory("1Gi", "") }
	cases := map[string]struct {
		job     *batchv1alpha1.Job
		pods    func(j *batchv1alpha1.Job) []*corev1.Pod
		want    want
		request string // the raised request of the task's container; "" for none
		event   string
	}{
		"a lone pod OOM-killed restarts rather than failing the job": {
			job: oomJob(bt.MakeJob("j", "ns").Task(bt.MakeTask("w", 1).Memory("1Gi", "").Policy(bt.OnOOMKilled(0, "8Gi")))),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod {
				p := pods(j, 0, R)
				oomKilled(p[0], "u")
				return p
			},
			want:    want{phase: batchv1alpha1.JobRunning, first: true, del: []string{"j-w-0"}},
			request: "1536Mi", event: "request 1Gi → 1536Mi",
		},
		"a container restarted in place after an OOM kill is raised too": {
			job: oomJob(bt.MakeJob("j", "ns").Task(task().Policy(bt.OnOOMKilled(100, "8Gi")))),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod {
				p := pods(j, 0, R, R)
				p[0].UID = "u"
				p[0].Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p[0].Spec.Containers[0].Name, RestartCount: 1,
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}
				return p
			},
			want:    want{phase: batchv1alpha1.JobRunning, first: true, del: []string{"j-w-0", "j-w-1"}},
			request: "2Gi", event: "request 1Gi → 2Gi",
		},
		"an exit code 137 policy without an OOM kill restarts without raising": {
			job: oomJob(bt.MakeJob("j", "ns").Task(task().Policy(batchv1alpha1.LifecyclePolicy{
				Action: batchv1alpha1.RestartTaskWithMoreMemoryAction, ExitCode: ptrI32(137),
				MemoryScaling: &batchv1alpha1.MemoryScaling{IncreasePercent: 50, MaxMemory: resource.MustParse("8Gi")}}))),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod {
				p := pods(j, 0, R, R)
				failedWith(p[1], 137)
				return p
			},
			want:  want{phase: batchv1alpha1.JobRunning, del: []string{"j-w-0", "j-w-1"}},
			event: "no container was OOM-killed",
		},
		"without an OOMKilled policy an OOM-killed pod is a PodFailed": {
			job: oomJob(bt.MakeJob("j", "ns").Task(task()).Policy(bt.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.PodFailedEvent))),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod {
				p := pods(j, 0, R, R)
				oomKilled(p[1], "u")
				return p
			},
			want: want{phase: batchv1alpha1.JobRestarting, retry: 1, version: 1, first: true, del: []string{"j-w-0", "j-w-1"}},
		},
		"a job policy covers every task": {
			job: oomJob(bt.MakeJob("j", "ns").Task(bt.MakeTask("ps", 1).Memory("1Gi", "")).Task(task()).Policy(bt.OnOOMKilled(25, "8Gi"))),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod {
				p := append(pods(j, 0, R), pods(j, 1, R, R)...)
				oomKilled(p[2], "u")
				return p
			},
			want:    want{phase: batchv1alpha1.JobRunning, first: true, del: []string{"j-w-0", "j-w-1"}},
			request: "1280Mi", event: "task w: pod j-w-1 was OOM-killed",
		},
		"a partition restart takes the failed pod's partition only": {
			job: oomJob(bt.MakeJob("j", "ns").Task(bt.MakeTask("w", 4).Partition(2, 2, 2).
				Policy(bt.OnEvent(batchv1alpha1.RestartPartitionAction, batchv1alpha1.PodFailedEvent)))),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod {
				p := pods(j, 0, R, R, R, R)
				failedWith(p[3], 1)
				return p
			},
			want: want{phase: batchv1alpha1.JobRunning, del: []string{"j-w-2", "j-w-3"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var ps []*corev1.Pod
			if tc.pods != nil {
				ps = tc.pods(tc.job)
			}
			d := Decide(Input{Job: tc.job, Pods: ps, PodGroup: pg(schedulingv1beta1.PodGroupRunning), Now: t0})
			check(t, d, tc.want)
			var got string
			if len(d.Status.MemoryScaling) > 0 {
				got = d.Status.MemoryScaling[0].Containers[0].Request.String()
			}
			if got != tc.request {
				t.Errorf("raised request = %q, want %q", got, tc.request)
			}
			if tc.event != "" && !hasEvent(d, "MemoryRaised", tc.event) {
				t.Errorf("no MemoryRaised event with %q: %+v", tc.event, d.Events)
			}
		})
	}
}

func ptrI32(v int32) *int32 { return &v }

func TestGrow(t *testing.T) {
	for _, tc := range []struct{ q, cap, want string }{
		{"1000Mi", "8Gi", "1500Mi"},
		{"1G", "8Gi", "1431Mi"}, // 1.5e9 bytes, rounded up to a whole MiB
		{"6Gi", "8Gi", "8Gi"},
		{"1", "8Gi", "1Mi"},
	} {
		if got := grow(resource.MustParse(tc.q), 50, resource.MustParse(tc.cap)); got.String() != tc.want {
			t.Errorf("grow(%s, 50%%, cap %s) = %s, want %s", tc.q, tc.cap, got.String(), tc.want)
		}
	}
}
