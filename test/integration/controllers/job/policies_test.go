//go:build integration

package job

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	"github.com/caldera-sh/caldera/test/poll"
)

// failPod makes one running pod fail with the exit code, as kwok ends pods
// that carry the run-duration annotation.
func failPod(t *testing.T, ns, name string, code int) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"pod.caldera.sh/run-duration":"10ms","pod.caldera.sh/exit-code":%q}}}`, strconv.Itoa(code))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := fw.Client.Patch(t.Context(), pod, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// uids maps the Job's pods that are not being deleted to their UIDs.
func uids(t *testing.T, ns, job string) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for _, p := range podsOf(t, ns, job) {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p.UID
		}
	}
	return out
}

// waitRunningPods waits until the Job has exactly n pods, all Running.
func waitRunningPods(t *testing.T, ns, job string, n int) map[string]types.UID {
	t.Helper()
	poll.Eventually(t, t.Context(), 60*time.Second, fmt.Sprintf("%d running pods of %s", n, job), func() (bool, string) {
		pods := podsOf(t, ns, job)
		running := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		return running == n && len(pods) == n, fmt.Sprintf("%d pods, %d running", len(pods), running)
	})
	return uids(t, ns, job)
}

// TestPolicyPairs: each event a policy may name, with the actions that
// differ in effect, on a running Job. The rows run in parallel, each in its
// own namespace.
func TestPolicyPairs(t *testing.T) {
	type row struct {
		// job builds the Job; its pods run until failPod ends one.
		job func(ns string) *batchv1alpha1.Job
		// fail is the pod made to fail once the Job runs.
		fail string
		// check waits for the outcome.
		check func(t *testing.T, ns string, before map[string]types.UID)
	}
	restarted := func(names ...string) func(t *testing.T, ns string, before map[string]types.UID) {
		return func(t *testing.T, ns string, before map[string]types.UID) {
			poll.Eventually(t, t.Context(), 60*time.Second, fmt.Sprintf("%v recreated and running", names), func() (bool, string) {
				now := uids(t, ns, "p")
				for _, n := range names {
					if now[n] == "" || now[n] == before[n] {
						return false, fmt.Sprintf("%s: %q", n, now[n])
					}
				}
				return len(now) == len(before), fmt.Sprint(now)
			})
			waitRunningPods(t, ns, "p", len(before))
			now := uids(t, ns, "p")
			for n, uid := range before {
				recreated := now[n] != uid
				want := false
				for _, r := range names {
					want = want || r == n
				}
				if recreated != want {
					t.Errorf("pod %s recreated = %t, want %t", n, recreated, want)
				}
			}
			j := getJob(t, ns, "p")
			if j.Status.RetryCount != 0 || j.Status.State.Phase != batchv1alpha1.JobRunning {
				t.Errorf("job %s with retryCount %d, want Running with 0", j.Status.State.Phase, j.Status.RetryCount)
			}
		}
	}
	ends := func(phase batchv1alpha1.JobPhase) func(t *testing.T, ns string, _ map[string]types.UID) {
		return func(t *testing.T, ns string, _ map[string]types.UID) {
			waitPhase(t, ns, "p", phase, 60*time.Second)
			poll.Eventually(t, t.Context(), 30*time.Second, "no pod left running", func() (bool, string) {
				for _, p := range podsOf(t, ns, "p") {
					if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
						return false, p.Name + " running"
					}
				}
				return true, ""
			})
		}
	}
	withPolicies := func(job *batchv1alpha1.Job, task int, policies ...batchv1alpha1.LifecyclePolicy) *batchv1alpha1.Job {
		if task < 0 {
			job.Spec.Policies = policies
		} else {
			job.Spec.Tasks[task].Policies = policies
		}
		return job
	}
	rows := map[string]row{
		"PodFailed/RestartPod (task policy over a job policy)": {
			job: func(ns string) *batchv1alpha1.Job {
				j := newJob(ns, "p", task("w", 2, "", 0), task("other", 1, "", 0))
				j.Spec.Policies = []batchv1alpha1.LifecyclePolicy{policy(busv1alpha1.AbortJobAction, batchv1alpha1.PodFailedEvent)}
				return withPolicies(j, 0, policy(busv1alpha1.RestartPodAction, batchv1alpha1.PodFailedEvent))
			},
			fail:  "p-w-0",
			check: restarted("p-w-0"),
		},
		"PodFailed/RestartTask": {
			job: func(ns string) *batchv1alpha1.Job {
				return withPolicies(newJob(ns, "p", task("w", 2, "", 0), task("other", 1, "", 0)), 0,
					policy(busv1alpha1.RestartTaskAction, batchv1alpha1.PodFailedEvent))
			},
			fail:  "p-w-0",
			check: restarted("p-w-0", "p-w-1"),
		},
		"PodFailed/TerminateJob": {
			job: func(ns string) *batchv1alpha1.Job {
				return withPolicies(newJob(ns, "p", task("w", 2, "", 0)), -1, policy(busv1alpha1.TerminateJobAction, batchv1alpha1.PodFailedEvent))
			},
			fail:  "p-w-1",
			check: ends(batchv1alpha1.JobTerminated),
		},
		"PodFailed/CompleteJob": {
			job: func(ns string) *batchv1alpha1.Job {
				return withPolicies(newJob(ns, "p", task("w", 2, "", 0)), -1, policy(busv1alpha1.CompleteJobAction, batchv1alpha1.PodFailedEvent))
			},
			fail:  "p-w-1",
			check: ends(batchv1alpha1.JobCompleted),
		},
		"*/AbortJob": {
			job: func(ns string) *batchv1alpha1.Job {
				return withPolicies(newJob(ns, "p", task("w", 2, "", 0)), -1, policy(busv1alpha1.AbortJobAction, batchv1alpha1.AnyEvent))
			},
			fail:  "p-w-0",
			check: ends(batchv1alpha1.JobAborted),
		},
		"TaskFailed/TerminateJob": {
			job: func(ns string) *batchv1alpha1.Job {
				// A task failing below its minAvailable; a single failed
				// pod has no policy of its own.
				return withPolicies(newJob(ns, "p", task("w", 2, "", 0), task("other", 1, "", 0)), 0,
					policy(busv1alpha1.TerminateJobAction, batchv1alpha1.TaskFailedEvent))
			},
			fail:  "p-w-0",
			check: ends(batchv1alpha1.JobTerminated),
		},
		"Unknown/RestartJob": {
			job: func(ns string) *batchv1alpha1.Job {
				// The gang needs all three pods; when one fails, the
				// PodGroup becomes Unknown.
				j := newJob(ns, "p", task("w", 2, "", 0), task("other", 1, "", 0))
				j.Spec.MinAvailable = 3
				j.Spec.MaxRetry = 5
				return withPolicies(j, -1, policy(busv1alpha1.RestartJobAction, batchv1alpha1.JobUnknownEvent))
			},
			fail: "p-other-0",
			check: func(t *testing.T, ns string, before map[string]types.UID) {
				poll.Eventually(t, t.Context(), 60*time.Second, "a restart", func() (bool, string) {
					j := getJob(t, ns, "p")
					return j.Status.RetryCount >= 1, fmt.Sprintf("%s retry %d", j.Status.State.Phase, j.Status.RetryCount)
				})
				after := waitRunningPods(t, ns, "p", 3)
				for n, uid := range before {
					if after[n] == uid {
						t.Errorf("pod %s kept across the restart", n)
					}
				}
				// The Job's status follows its pods' a moment later.
				poll.Eventually(t, t.Context(), 30*time.Second, "the job Running again after one restart", func() (bool, string) {
					j := getJob(t, ns, "p")
					return j.Status.State.Phase == batchv1alpha1.JobRunning && j.Status.RetryCount == 1,
						fmt.Sprintf("%s with retryCount %d", j.Status.State.Phase, j.Status.RetryCount)
				})
			},
		},
	}
	for name, r := range rows {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			create(t, r.job(ns))
			waitPhase(t, ns, "p", batchv1alpha1.JobRunning, 60*time.Second)
			before := waitRunningPods(t, ns, "p", int(totalReplicas(getJob(t, ns, "p"))))
			failPod(t, ns, r.fail, 1)
			r.check(t, ns, before)
		})
	}
}

func totalReplicas(j *batchv1alpha1.Job) int32 {
	var n int32
	for _, ts := range j.Spec.Tasks {
		n += ts.Replicas
	}
	return n
}

// TestCommandsEndOrRestartTheJob: the Command actions other than
// AbortJob/ResumeJob, each executed once and removed.
func TestCommandsEndOrRestartTheJob(t *testing.T) {
	for action, check := range map[busv1alpha1.Action]func(t *testing.T, ns string, before map[string]types.UID){
		busv1alpha1.RestartJobAction: func(t *testing.T, ns string, before map[string]types.UID) {
			poll.Eventually(t, t.Context(), 60*time.Second, "the restart counted", func() (bool, string) {
				j := getJob(t, ns, "c")
				return j.Status.RetryCount == 1, fmt.Sprintf("%s retry %d", j.Status.State.Phase, j.Status.RetryCount)
			})
			// The restart is counted before the old pods are deleted: wait
			// for two running pods that are all new.
			poll.Eventually(t, t.Context(), 60*time.Second, "the pods replaced", func() (bool, string) {
				after := waitRunningPods(t, ns, "c", 2)
				for n, uid := range before {
					if after[n] == uid {
						return false, fmt.Sprintf("pod %s not replaced yet", n)
					}
				}
				return true, ""
			})
		},
		busv1alpha1.TerminateJobAction: func(t *testing.T, ns string, _ map[string]types.UID) {
			waitPhase(t, ns, "c", batchv1alpha1.JobTerminated, 60*time.Second)
		},
		busv1alpha1.CompleteJobAction: func(t *testing.T, ns string, _ map[string]types.UID) {
			waitPhase(t, ns, "c", batchv1alpha1.JobCompleted, 60*time.Second)
		},
	} {
		t.Run(string(action), func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			create(t, newJob(ns, "c", task("w", 2, "", 0)))
			j := waitPhase(t, ns, "c", batchv1alpha1.JobRunning, 60*time.Second)
			before := waitRunningPods(t, ns, "c", 2)
			create(t, &busv1alpha1.Command{
				ObjectMeta:   metav1.ObjectMeta{Namespace: ns, Name: "cmd"},
				Action:       string(action),
				TargetObject: &metav1.OwnerReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "c", UID: j.UID},
			})
			check(t, ns, before)
			poll.Eventually(t, t.Context(), 30*time.Second, "the command removed", func() (bool, string) {
				var cmds busv1alpha1.CommandList
				if err := fw.Client.List(t.Context(), &cmds, client.InNamespace(ns)); err != nil {
					return false, err.Error()
				}
				return len(cmds.Items) == 0, fmt.Sprintf("%d commands left", len(cmds.Items))
			})
			want := int32(0)
			if action == busv1alpha1.RestartJobAction {
				want = 1 // executed once
			}
			if got := getJob(t, ns, "c"); got.Status.RetryCount != want {
				t.Errorf("retryCount = %d after %s, want %d", got.Status.RetryCount, action, want)
			}
		})
	}
}

// TestScaleUpAndDown: changing a task's replicas on a running Job adds
// pods with the next indices and removes the highest ones, without
// restarting the pods that stay.
func TestScaleUpAndDown(t *testing.T) {
	ns := namespace(t)
	j := newJob(ns, "s", task("w", 2, "", 0))
	j.Spec.MinAvailable = 1
	create(t, j)
	waitPhase(t, ns, "s", batchv1alpha1.JobRunning, 60*time.Second)
	first := waitRunningPods(t, ns, "s", 2)

	scale := func(n int32) {
		t.Helper()
		patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/tasks/0/replicas","value":%d}]`, n)
		if err := fw.Client.Patch(t.Context(), &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}},
			client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	scale(4)
	up := waitRunningPods(t, ns, "s", 4)
	for _, n := range []string{"s-w-0", "s-w-1"} {
		if up[n] != first[n] {
			t.Errorf("scaling up recreated %s", n)
		}
	}
	if up["s-w-2"] == "" || up["s-w-3"] == "" {
		t.Errorf("after scaling to 4: %v, want s-w-0..s-w-3", up)
	}
	scale(1)
	down := waitRunningPods(t, ns, "s", 1)
	if down["s-w-0"] != first["s-w-0"] {
		t.Errorf("after scaling to 1: %v, want the original s-w-0 only", down)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the status follows the replicas", func() (bool, string) {
		got := getJob(t, ns, "s")
		return got.Status.State.Phase == batchv1alpha1.JobRunning && got.Status.Running == 1 && got.Status.RetryCount == 0,
			fmt.Sprintf("%s running %d retry %d", got.Status.State.Phase, got.Status.Running, got.Status.RetryCount)
	})
}

// TestPluginsProvideTheirObjects: a Job with the env, svc and ssh plugins
// gets a headless Service, a hosts ConfigMap that follows scaling, a
// NetworkPolicy, an ssh key Secret generated once, and pods that use them.
func TestPluginsProvideTheirObjects(t *testing.T) {
	ns := namespace(t)
	j := newJob(ns, "mpi", task("master", 1, "", 0), task("worker", 2, "", 0))
	j.Spec.Plugins = map[string][]string{"env": {}, "svc": {}, "ssh": {}}
	create(t, j)
	waitPhase(t, ns, "mpi", batchv1alpha1.JobRunning, 60*time.Second)
	waitRunningPods(t, ns, "mpi", 3)

	get := func(name string, obj client.Object) {
		t.Helper()
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			t.Fatal(err)
		}
	}
	var svc corev1.Service
	get("mpi", &svc)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector[batchv1alpha1.JobNameKey] != "mpi" {
		t.Errorf("service: clusterIP %q selector %v, want a headless service selecting the job", svc.Spec.ClusterIP, svc.Spec.Selector)
	}
	var np networkingv1.NetworkPolicy
	get("mpi", &np)
	var cm corev1.ConfigMap
	get("mpi-svc", &cm)
	if cm.Data["VC_WORKER_NUM"] != "2" || cm.Data["VC_WORKER_HOSTS"] != "mpi-worker-0.mpi,mpi-worker-1.mpi" || cm.Data["master.host"] != "mpi-master-0.mpi" {
		t.Errorf("hosts config map: %v", cm.Data)
	}
	var secret corev1.Secret
	get("mpi-ssh", &secret)
	if !strings.Contains(string(secret.Data["id_rsa"]), "PRIVATE KEY") || len(secret.Data["id_rsa.pub"]) == 0 ||
		!strings.Contains(string(secret.Data["config"]), "Host mpi-worker-1") {
		t.Errorf("ssh secret keys: %v", slices.Sorted(maps.Keys(secret.Data)))
	}
	var pod corev1.Pod
	get("mpi-worker-1", &pod)
	if pod.Spec.Hostname != "mpi-worker-1" || pod.Spec.Subdomain != "mpi" {
		t.Errorf("pod hostname %q subdomain %q", pod.Spec.Hostname, pod.Spec.Subdomain)
	}
	env := map[string]string{}
	for _, e := range pod.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env["VC_TASK_INDEX"] != "1" {
		t.Errorf("VC_TASK_INDEX = %q, want 1", env["VC_TASK_INDEX"])
	}
	mounts := map[string]bool{}
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		mounts[m.MountPath] = true
	}
	if !mounts["/etc/volcano"] || !mounts["/root/.ssh"] {
		t.Errorf("mounts %v, want /etc/volcano and /root/.ssh", mounts)
	}

	// Scaling the workers rewrites the hosts, not the key pair.
	patch := `[{"op":"replace","path":"/spec/tasks/1/replicas","value":3}]`
	if err := fw.Client.Patch(t.Context(), &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mpi"}},
		client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	waitRunningPods(t, ns, "mpi", 4)
	poll.Eventually(t, t.Context(), 30*time.Second, "the hosts follow the scaling", func() (bool, string) {
		get("mpi-svc", &cm)
		return cm.Data["VC_WORKER_NUM"] == "3", fmt.Sprint(cm.Data)
	})
	var after corev1.Secret
	get("mpi-ssh", &after)
	if string(after.Data["id_rsa"]) != string(secret.Data["id_rsa"]) {
		t.Error("the ssh key pair changed when the job scaled")
	}
}
