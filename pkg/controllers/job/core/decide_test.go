package core

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	bt "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func defaulted(w *bt.JobWrapper) *batchv1alpha1.Job {
	j := w.Obj()
	j.UID = "uid-1"
	batchv1alpha1.SetDefaults_Job(j)
	return j
}

func withPhase(j *batchv1alpha1.Job, p batchv1alpha1.JobPhase) *batchv1alpha1.Job {
	j.Status.State = batchv1alpha1.JobState{Phase: p, LastTransitionTime: metav1.NewTime(t0)}
	return j
}

// pods builds the Job's pods of task ti in the given phases.
func pods(j *batchv1alpha1.Job, ti int, phases ...corev1.PodPhase) []*corev1.Pod {
	var out []*corev1.Pod
	for i, ph := range phases {
		p := BuildPod(j, ti, i, nil)
		p.CreationTimestamp = metav1.NewTime(t0)
		p.Status.Phase = ph
		out = append(out, p)
	}
	return out
}

func failedWith(p *corev1.Pod, code int32) *corev1.Pod {
	p.Status.Phase = corev1.PodFailed
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.NewTime(t0)},
	}}}
	return p
}

func pg(phase schedulingv1beta1.PodGroupPhase) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{Status: schedulingv1beta1.PodGroupStatus{Phase: phase}}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

type want struct {
	phase      batchv1alpha1.JobPhase
	retry      int32
	version    int32
	create     []string
	del        []string
	noPG       bool
	first      bool
	deleteJob  bool
	requeue    time.Duration
	commandsGo int
}

func check(t *testing.T, d Decision, w want) {
	t.Helper()
	if got := d.Status.State.Phase; got != w.phase {
		t.Errorf("phase = %q, want %q", got, w.phase)
	}
	if d.Status.RetryCount != w.retry || d.Status.Version != w.version {
		t.Errorf("retry/version = %d/%d, want %d/%d", d.Status.RetryCount, d.Status.Version, w.retry, w.version)
	}
	if diff := cmp.Diff(w.create, names(d.CreatePods)); diff != "" {
		t.Errorf("created (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(w.del, names(d.DeletePods)); diff != "" {
		t.Errorf("deleted (-want,+got):\n%s", diff)
	}
	if (d.PodGroup == nil) != w.noPG {
		t.Errorf("PodGroup wanted = %v, want %v", d.PodGroup != nil, !w.noPG)
	}
	if d.StatusFirst != w.first {
		t.Errorf("status first = %v, want %v", d.StatusFirst, w.first)
	}
	if d.DeleteJob != w.deleteJob {
		t.Errorf("delete job = %v, want %v", d.DeleteJob, w.deleteJob)
	}
	if d.RequeueAfter != w.requeue {
		t.Errorf("requeue after = %v, want %v", d.RequeueAfter, w.requeue)
	}
	if len(d.DeleteCommands) != w.commandsGo {
		t.Errorf("commands deleted = %d, want %d", len(d.DeleteCommands), w.commandsGo)
	}
}

func TestLifecycle(t *testing.T) {
	R, S, F, P := corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending
	job := func() *bt.JobWrapper { return bt.MakeJob("j", "ns").Task(bt.MakeTask("w", 3)) }
	cases := map[string]struct {
		job  *batchv1alpha1.Job
		pods func(j *batchv1alpha1.Job) []*corev1.Pod
		pg   *schedulingv1beta1.PodGroup
		cmds []*busv1alpha1.Command
		// at is the time of the decision after t0; 0 means one minute.
		at   time.Duration
		want want
	}{
		"a new job waits for its PodGroup to be admitted": {
			job:  defaulted(job()),
			want: want{phase: batchv1alpha1.JobPending},
		},
		"an admitted job gets its pods": {
			job:  defaulted(job()),
			pg:   pg(schedulingv1beta1.PodGroupInqueue),
			want: want{phase: batchv1alpha1.JobPending, create: []string{"j-w-0", "j-w-1", "j-w-2"}},
		},
		"a job whose PodGroup ended with a pod missing (evicted) gets it again": {
			job:  withPhase(defaulted(job()), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, S, S) },
			pg:   pg(schedulingv1beta1.PodGroupCompleted),
			want: want{phase: batchv1alpha1.JobRunning, create: []string{"j-w-2"}},
		},
		"enough running pods make it Running": {
			job:  withPhase(defaulted(job()), batchv1alpha1.JobPending),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, R, R, R) },
			pg:   pg(schedulingv1beta1.PodGroupRunning),
			want: want{phase: batchv1alpha1.JobRunning},
		},
		"all pods succeeded completes it and drops the PodGroup": {
			job:  withPhase(defaulted(job()), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, S, S, S) },
			want: want{phase: batchv1alpha1.JobCompleted, noPG: true},
		},
		"minSuccess 3 of 10 completes it and stops the rest": {
			job: withPhase(defaulted(bt.MakeJob("j", "ns").MinAvailable(1).MinSuccess(3).Task(bt.MakeTask("w", 10))), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod {
				return pods(j, 0, S, S, S, R, R, R, R, R, R, P)
			},
			want: want{phase: batchv1alpha1.JobCompleted, noPG: true,
				del: []string{"j-w-3", "j-w-4", "j-w-5", "j-w-6", "j-w-7", "j-w-8", "j-w-9"}},
		},
		"without a policy a failed pod stays and the job fails when all ended": {
			job:  withPhase(defaulted(job()), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, S, S, F) },
			want: want{phase: batchv1alpha1.JobFailed, noPG: true},
		},
		"PodFailed with RestartJob restarts the whole job": {
			job:  withPhase(defaulted(job().Policy(bt.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.PodFailedEvent))), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, R, F, R) },
			want: want{phase: batchv1alpha1.JobRestarting, retry: 1, version: 1, first: true, del: []string{"j-w-0", "j-w-1", "j-w-2"}},
		},
		"an Unknown gang with fewer pods running than minAvailable triggers its policy": {
			job:  withPhase(defaulted(job().Policy(bt.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.JobUnknownEvent))), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, R, F, R) },
			pg:   pg(schedulingv1beta1.PodGroupUnknown),
			want: want{phase: batchv1alpha1.JobRestarting, retry: 1, version: 1, first: true, del: []string{"j-w-0", "j-w-1", "j-w-2"}},
		},
		"an Unknown PodGroup not yet rewritten after a restart is not acted on again": {
			job: func() *batchv1alpha1.Job {
				j := withPhase(defaulted(job().Policy(bt.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.JobUnknownEvent))), batchv1alpha1.JobRunning)
				j.Status.RetryCount, j.Status.Version = 1, 1
				return j
			}(),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod {
				j.Status.Version = 1
				return pods(j, 0, R, R, R)
			},
			pg:   pg(schedulingv1beta1.PodGroupUnknown),
			want: want{phase: batchv1alpha1.JobRunning, retry: 1, version: 1},
		},
		"restarting ends Pending once every pod is gone": {
			job: func() *batchv1alpha1.Job {
				j := withPhase(defaulted(job()), batchv1alpha1.JobRestarting)
				j.Status.RetryCount, j.Status.Version = 1, 1
				return j
			}(),
			want: want{phase: batchv1alpha1.JobPending, retry: 1, version: 1},
		},
		"maxRetry exhausted fails the job": {
			job: func() *batchv1alpha1.Job {
				j := withPhase(defaulted(job().MaxRetry(2)), batchv1alpha1.JobRestarting)
				j.Status.RetryCount, j.Status.Version = 2, 2
				return j
			}(),
			want: want{phase: batchv1alpha1.JobFailed, retry: 2, version: 2, noPG: true},
		},
		"an exit code policy matches its code": {
			job:  withPhase(defaulted(job().Policy(bt.OnExitCode(busv1alpha1.AbortJobAction, 3))), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { p := pods(j, 0, R, R, R); failedWith(p[1], 3); return p },
			want: want{phase: batchv1alpha1.JobAborting, first: true, del: []string{"j-w-0", "j-w-2"}},
		},
		"an exit code policy ignores other codes": {
			job:  withPhase(defaulted(job().Policy(bt.OnExitCode(busv1alpha1.AbortJobAction, 3))), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { p := pods(j, 0, R, R, R); failedWith(p[1], 1); return p },
			want: want{phase: batchv1alpha1.JobRunning},
		},
		"a task policy overrides the job policy": {
			job: withPhase(defaulted(bt.MakeJob("j", "ns").Policy(bt.OnEvent(busv1alpha1.AbortJobAction, batchv1alpha1.PodFailedEvent)).
				Task(bt.MakeTask("w", 3).Policy(bt.OnEvent(busv1alpha1.RestartPodAction, batchv1alpha1.PodFailedEvent)))), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, R, F, R) },
			want: want{phase: batchv1alpha1.JobRunning, del: []string{"j-w-1"}},
		},
		"RestartTask deletes the task's pods": {
			job: withPhase(defaulted(bt.MakeJob("j", "ns").Task(bt.MakeTask("ps", 1)).
				Task(bt.MakeTask("w", 2).Policy(bt.OnEvent(busv1alpha1.RestartTaskAction, batchv1alpha1.PodFailedEvent)))), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return append(pods(j, 0, R), pods(j, 1, R, F)...) },
			want: want{phase: batchv1alpha1.JobRunning, del: []string{"j-w-0", "j-w-1"}},
		},
		"PodPending acts only after its timeout": {
			job: withPhase(defaulted(bt.MakeJob("j", "ns").MinAvailable(2).Task(bt.MakeTask("w", 3)).
				Policy(bt.After(bt.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.PodPendingEvent), 5*time.Minute))),
				batchv1alpha1.JobPending),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, R, R, P) },
			pg:   pg(schedulingv1beta1.PodGroupInqueue),
			want: want{phase: batchv1alpha1.JobRunning, requeue: 4 * time.Minute},
		},
		"PodPending acts once its timeout passed": {
			job: withPhase(defaulted(bt.MakeJob("j", "ns").MinAvailable(2).Task(bt.MakeTask("w", 3)).
				Policy(bt.After(bt.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.PodPendingEvent), 5*time.Minute))),
				batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, R, R, P) },
			pg:   pg(schedulingv1beta1.PodGroupRunning),
			at:   6 * time.Minute,
			want: want{phase: batchv1alpha1.JobRestarting, retry: 1, version: 1, first: true, del: []string{"j-w-0", "j-w-1", "j-w-2"}},
		},
		"PodEvicted triggers its policy": {
			job: withPhase(defaulted(job().Policy(bt.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.PodEvictedEvent))), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod {
				p := pods(j, 0, R, R, R)
				p[2].DeletionTimestamp = ptr.To(metav1.NewTime(t0))
				p[2].Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}
				return p
			},
			want: want{phase: batchv1alpha1.JobRestarting, retry: 1, version: 1, first: true, del: []string{"j-w-0", "j-w-1"}},
		},
		"TaskCompleted with CompleteJob completes the job": {
			job: withPhase(defaulted(bt.MakeJob("j", "ns").Task(bt.MakeTask("master", 1).
				Policy(bt.OnEvent(busv1alpha1.CompleteJobAction, batchv1alpha1.TaskCompletedEvent))).Task(bt.MakeTask("w", 2))), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return append(pods(j, 0, S), pods(j, 1, R, R)...) },
			want: want{phase: batchv1alpha1.JobCompleting, first: true, del: []string{"j-w-0", "j-w-1"}},
		},
		"the wildcard does not act on pending pods": {
			job:  withPhase(defaulted(job().Policy(bt.OnEvent(busv1alpha1.RestartJobAction, batchv1alpha1.AnyEvent))), batchv1alpha1.JobPending),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, P, P, P) },
			pg:   pg(schedulingv1beta1.PodGroupInqueue),
			want: want{phase: batchv1alpha1.JobPending},
		},
		"a dependent task waits for the task it depends on": {
			job: defaulted(bt.MakeJob("j", "ns").Task(bt.MakeTask("master", 1)).
				Task(bt.MakeTask("w", 2).DependsOn(batchv1alpha1.IterationAll, "master"))),
			pg:   pg(schedulingv1beta1.PodGroupInqueue),
			want: want{phase: batchv1alpha1.JobPending, create: []string{"j-master-0"}},
		},
		"the dependent task starts once the task it depends on runs": {
			job: defaulted(bt.MakeJob("j", "ns").MinAvailable(1).Task(bt.MakeTask("master", 1)).
				Task(bt.MakeTask("w", 2).DependsOn(batchv1alpha1.IterationAll, "master"))),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, R) },
			pg:   pg(schedulingv1beta1.PodGroupInqueue),
			want: want{phase: batchv1alpha1.JobRunning, create: []string{"j-w-0", "j-w-1"}},
		},
		"scaling down deletes pods beyond the replicas": {
			job: withPhase(defaulted(bt.MakeJob("j", "ns").MinAvailable(2).Task(bt.MakeTask("w", 2))), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod {
				big := j.DeepCopy()
				big.Spec.Tasks[0].Replicas = 3
				return pods(big, 0, R, R, R)
			},
			want: want{phase: batchv1alpha1.JobRunning, del: []string{"j-w-2"}},
		},
		"an AbortJob command aborts and is consumed": {
			job:  withPhase(defaulted(job()), batchv1alpha1.JobRunning),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, R, R, S) },
			cmds: []*busv1alpha1.Command{{ObjectMeta: metav1.ObjectMeta{Name: "abort"}, Action: string(busv1alpha1.AbortJobAction)}},
			want: want{phase: batchv1alpha1.JobAborting, first: true, del: []string{"j-w-0", "j-w-1"}, commandsGo: 1},
		},
		"aborting ends Aborted once no pod is alive": {
			job:  withPhase(defaulted(job()), batchv1alpha1.JobAborting),
			pods: func(j *batchv1alpha1.Job) []*corev1.Pod { return pods(j, 0, S) },
			want: want{phase: batchv1alpha1.JobAborted, noPG: true},
		},
		"ResumeJob restarts an aborted job": {
			job:  withPhase(defaulted(job()), batchv1alpha1.JobAborted),
			cmds: []*busv1alpha1.Command{{ObjectMeta: metav1.ObjectMeta{Name: "resume"}, Action: string(busv1alpha1.ResumeJobAction)}},
			want: want{phase: batchv1alpha1.JobPending, retry: 1, version: 1, first: true, commandsGo: 1},
		},
		"a finished job is deleted after its TTL": {
			job: func() *batchv1alpha1.Job {
				j := withPhase(defaulted(job().TTLSecondsAfterFinished(5)), batchv1alpha1.JobCompleted)
				return j
			}(),
			at:   10 * time.Second,
			want: want{phase: batchv1alpha1.JobCompleted, noPG: true, deleteJob: true},
		},
		"a finished job waits out its TTL": {
			job:  withPhase(defaulted(job().TTLSecondsAfterFinished(60)), batchv1alpha1.JobCompleted),
			at:   10 * time.Second,
			want: want{phase: batchv1alpha1.JobCompleted, noPG: true, requeue: 50 * time.Second},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var ps []*corev1.Pod
			if tc.pods != nil {
				ps = tc.pods(tc.job)
			}
			now := t0.Add(time.Minute)
			if tc.at != 0 {
				now = t0.Add(tc.at)
			}
			d := Decide(Input{Job: tc.job, Pods: ps, PodGroup: tc.pg, Commands: tc.cmds, GatedByPodGroup: true, Now: now})
			check(t, d, tc.want)
		})
	}
}

func TestPodsCarryVolcanosLabelsAndAnnotations(t *testing.T) {
	j := defaulted(bt.MakeJob("train", "ns").Queue("team").PriorityClassName("high").Plugin("env").Plugin("svc").Task(bt.MakeTask("worker", 2)))
	j.Status.Version, j.Status.RetryCount = 2, 1
	plugins, err := NewPlugins(j, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := BuildPod(j, 0, 1, plugins)
	wantAnn := map[string]string{
		"volcano.sh/task-spec": "worker", "volcano.sh/task-index": "1", "scheduling.k8s.io/group-name": "train-uid-1",
		"volcano.sh/job-name": "train", "volcano.sh/queue-name": "team", "volcano.sh/job-version": "2",
		"volcano.sh/template-uid": "train-worker", "volcano.sh/job-retry-count": "1",
	}
	for k, v := range wantAnn {
		if p.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, p.Annotations[k], v)
		}
	}
	if p.Name != "train-worker-1" || p.Spec.Hostname != "train-worker-1" || p.Spec.Subdomain != "train" {
		t.Errorf("name/hostname/subdomain = %s/%s/%s", p.Name, p.Spec.Hostname, p.Spec.Subdomain)
	}
	if p.Spec.SchedulerName != "volcano" || p.Spec.PriorityClassName != "high" {
		t.Errorf("schedulerName/priorityClassName = %s/%s", p.Spec.SchedulerName, p.Spec.PriorityClassName)
	}
	env := map[string]string{}
	for _, e := range p.Spec.Containers[0].Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil {
			env[e.Name] = "from " + e.ValueFrom.ConfigMapKeyRef.Name + "/" + e.ValueFrom.ConfigMapKeyRef.Key
		}
	}
	wantEnv := map[string]string{"VC_TASK_INDEX": "1", "VK_TASK_INDEX": "1",
		"VC_WORKER_HOSTS": "from train-svc/VC_WORKER_HOSTS", "VC_WORKER_NUM": "from train-svc/VC_WORKER_NUM"}
	if diff := cmp.Diff(wantEnv, env); diff != "" {
		t.Errorf("env (-want,+got):\n%s", diff)
	}
	var cm *corev1.ConfigMap
	for _, pl := range plugins {
		for _, o := range pl.Objects(j) {
			if c, ok := o.Object.(*corev1.ConfigMap); ok {
				cm = c
			}
		}
	}
	if cm == nil || cm.Data["worker.host"] != "train-worker-0.train\ntrain-worker-1.train" || cm.Data["VC_WORKER_NUM"] != "2" {
		t.Errorf("hosts ConfigMap = %+v", cm)
	}
}

func TestPodGroupOfAJob(t *testing.T) {
	j := defaulted(bt.MakeJob("train", "ns").Queue("team").MinAvailable(3).
		Task(bt.MakeTask("ps", 1).MinAvailable(1).CPURequest("2")).Task(bt.MakeTask("w", 4).CPURequest("1")))
	pg := BuildPodGroup(j)
	if pg.Name != "train-uid-1" || pg.Spec.MinMember != 3 || pg.Spec.Queue != "team" {
		t.Errorf("PodGroup %s minMember %d queue %s", pg.Name, pg.Spec.MinMember, pg.Spec.Queue)
	}
	// ps's minimum (1 x 2 cpu) first, then 2 workers (1 cpu each).
	if cpu := (*pg.Spec.MinResources)[corev1.ResourceCPU]; cpu.String() != "4" {
		t.Errorf("minResources cpu = %s, want 4", cpu.String())
	}
	if diff := cmp.Diff(map[string]int32{"ps": 1, "w": 4}, pg.Spec.MinTaskMember); diff != "" {
		t.Errorf("minTaskMember (-want,+got):\n%s", diff)
	}
}

// TestPartitionsBecomeSubGroups: a partitioned task is a sub-group policy
// of the PodGroup, one sub-group per partition-id label of its pods.
func TestPartitionsBecomeSubGroups(t *testing.T) {
	j := defaulted(bt.MakeJob("llm", "ns").Task(bt.MakeTask("launcher", 1)).Task(bt.MakeTask("worker", 8).Partition(4, 2, 3)))
	tier := int32(1)
	j.Spec.Tasks[1].PartitionPolicy.NetworkTopology = &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: &tier}
	pg := BuildPodGroup(j)
	want := []schedulingv1beta1.SubGroupPolicySpec{{
		Name:            "worker",
		NetworkTopology: j.Spec.Tasks[1].PartitionPolicy.NetworkTopology,
		SubGroupSize:    ptr.To[int32](2),
		MinSubGroups:    ptr.To[int32](3),
		LabelSelector:   &metav1.LabelSelector{MatchLabels: map[string]string{batchv1alpha1.TaskSpecKey: "worker"}},
		MatchLabelKeys:  []string{batchv1alpha1.TaskPartitionID},
	}}
	if diff := cmp.Diff(want, pg.Spec.SubGroupPolicy); diff != "" {
		t.Errorf("subGroupPolicy (-want,+got):\n%s", diff)
	}
	if pod := BuildPod(j, 1, 5, nil); pod.Labels[batchv1alpha1.TaskPartitionID] != "2" || pod.Labels[batchv1alpha1.TaskSpecKey] != "worker" {
		t.Errorf("worker-5 labels %v, want partition 2 of task worker", pod.Labels)
	}
}

func TestDependentTasksDoNotBlockTheGang(t *testing.T) {
	j := defaulted(bt.MakeJob("j", "ns").Task(bt.MakeTask("master", 1).CPURequest("1")).
		Task(bt.MakeTask("w", 2).CPURequest("1").DependsOn(batchv1alpha1.IterationAll, "master")))
	pg := BuildPodGroup(j)
	if pg.Spec.MinMember != 1 {
		t.Errorf("minMember = %d, want 1: the workers wait for the master", pg.Spec.MinMember)
	}
	if diff := cmp.Diff(map[string]int32{"master": 1}, pg.Spec.MinTaskMember); diff != "" {
		t.Errorf("minTaskMember (-want,+got):\n%s", diff)
	}
	if cpu := (*pg.Spec.MinResources)[corev1.ResourceCPU]; cpu.String() != "1" {
		t.Errorf("minResources cpu = %s, want 1", cpu.String())
	}
}
