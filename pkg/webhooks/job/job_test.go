package job_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/webhooks/job"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

func queues() []client.Object {
	return []client.Object{
		testingsched.MakeQueue("root").Obj(),
		testingsched.MakeQueue("default").Parent("root").State(schedulingv1beta1.QueueStateOpen).Obj(),
		testingsched.MakeQueue("team-a").State(schedulingv1beta1.QueueStateOpen).Obj(),
		testingsched.MakeQueue("fresh").Obj(), // state not set yet
		testingsched.MakeQueue("closed").State(schedulingv1beta1.QueueStateClosed).Obj(),
		testingsched.MakeQueue("eng").State(schedulingv1beta1.QueueStateOpen).Obj(),
		testingsched.MakeQueue("eng-ml").Parent("eng").State(schedulingv1beta1.QueueStateOpen).Obj(),
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
	}
}

func newJob(name string) *testingbatch.JobWrapper {
	return testingbatch.MakeJob(name, "ns").Task(testingbatch.MakeTask("worker", 2))
}

func TestDefault(t *testing.T) {
	w := job.NewWebhook(wt.Reader(t))
	got := testingbatch.MakeJob("j", "ns").
		Task(testingbatch.MakeTask("", 2)).
		Task(testingbatch.MakeTask("", 1).MinAvailable(1)).
		Plugin("mpi", "--master=default0", "--worker=default1").Obj()
	if err := w.Default(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	want := got.DeepCopy()
	want.Spec.Queue = "default"
	want.Spec.SchedulerName = "volcano"
	want.Spec.MaxRetry = 3
	want.Spec.MinAvailable = 3
	want.Spec.Tasks[0].Name, want.Spec.Tasks[0].MinAvailable, want.Spec.Tasks[0].MaxRetry = "default0", ptr.To[int32](2), 3
	want.Spec.Tasks[1].Name, want.Spec.Tasks[1].MaxRetry = "default1", 3
	want.Spec.Plugins["svc"], want.Spec.Plugins["ssh"] = []string{}, []string{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Default (-want,+got):\n%s", diff)
	}
	again := got.DeepCopy()
	if err := w.Default(t.Context(), again); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("Default is not idempotent (-first,+second):\n%s", diff)
	}
}

// TestDefaultRefusesUnsupportedValues: a value outside one of the schema's
// enums is refused while defaulting, with one field error, before the API
// server's schema check would add a pathless line of its own.
func TestDefaultRefusesUnsupportedValues(t *testing.T) {
	cases := map[string]struct {
		job  *batchv1alpha1.Job
		want []metav1.StatusCause
	}{
		"policy action": {
			job: newJob("j").Policy(batchv1alpha1.LifecyclePolicy{Event: batchv1alpha1.PodFailedEvent, Action: "SyncJob"}).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.NotSupported, "spec.policies[0].action",
				`Unsupported value: "SyncJob": supported values: "AbortJob", "CompleteJob", "RestartJob", "RestartPartition", "RestartPod", "RestartTask", "RestartTaskWithMoreMemory", "ResumeJob", "TerminateJob"`)},
		},
		"task policy event": {
			job: testingbatch.MakeJob("j", "ns").Task(testingbatch.MakeTask("worker", 2).
				Policy(batchv1alpha1.LifecyclePolicy{Event: "OutOfSync", Action: busv1alpha1.RestartJobAction})).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.NotSupported, "spec.tasks[0].policies[0].event",
				`Unsupported value: "OutOfSync": supported values: "*", "JobUpdated", "OOMKilled", "PodEvicted", "PodFailed", "PodPending", "TaskCompleted", "TaskFailed", "Unknown"`)},
		},
		"other problems are left to validation": {
			job: newJob("j").Queue("nope").Policy(batchv1alpha1.LifecyclePolicy{Action: busv1alpha1.RestartJobAction}).Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := job.NewWebhook(wt.Reader(t, queues()...)).Default(t.Context(), tc.job)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("Default causes (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateCreate(t *testing.T) {
	privileged := newJob("privileged").Obj()
	privileged.Spec.Tasks[0].Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	noImage := newJob("no-image").Obj()
	noImage.Spec.Tasks[0].Template.Spec.Containers[0].Image = ""

	cases := map[string]struct {
		job    *batchv1alpha1.Job
		reader func(t *testing.T) lookup.Reader
		want   []metav1.StatusCause
		// ignoreMessage compares type and field only.
		ignoreMessage bool
	}{
		"valid job in the default queue": {
			job: newJob("j").Obj(),
		},
		"queue whose state is not set yet counts as open": {
			job: newJob("j").Queue("fresh").Obj(),
		},
		"queue that does not exist, listing the others": {
			job:  newJob("j").Queue("nope").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.queue", `Invalid value: "nope": queue does not exist; existing queues: closed, default, eng, eng-ml, fresh, team-a`)},
		},
		"closed queue": {
			job:  newJob("j").Queue("closed").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.queue", `Invalid value: "closed": queue is Closed: it accepts no new work until it is opened`)},
		},
		"root queue": {
			job:  newJob("j").Queue("root").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.queue", `Invalid value: "root": the root queue stands for the whole cluster and cannot hold work; submit to a leaf queue`)},
		},
		"queue with child queues": {
			job:  newJob("j").Queue("eng").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.queue", `Invalid value: "eng": queue has child queues (eng-ml): work runs in leaf queues only`)},
		},
		"queue the cache has not seen yet": {
			job: newJob("j").Queue("new").Obj(),
			reader: func(t *testing.T) lookup.Reader {
				return wt.StaleReader(t, queues(), append(queues(), testingsched.MakeQueue("new").Obj()))
			},
		},
		"queue the cache still sees closed": {
			job: newJob("j").Queue("reopened").Obj(),
			reader: func(t *testing.T) lookup.Reader {
				return wt.StaleReader(t,
					append(queues(), testingsched.MakeQueue("reopened").State(schedulingv1beta1.QueueStateClosed).Obj()),
					append(queues(), testingsched.MakeQueue("reopened").State(schedulingv1beta1.QueueStateOpen).Obj()))
			},
		},
		"queue the cache still has but the API server does not": {
			job: newJob("j").Queue("gone").Obj(),
			reader: func(t *testing.T) lookup.Reader {
				return wt.StaleReader(t, append(queues(), testingsched.MakeQueue("gone").Obj()), queues())
			},
			// The cache says yes; a refusal needs no confirmation, an
			// acceptance is not confirmed (the scheduler still refuses
			// to admit the job).
		},
		"existing and builtin PriorityClasses": {
			job: newJob("j").PriorityClassName("high").Obj(),
		},
		"builtin PriorityClass": {
			job: newJob("j").PriorityClassName("system-node-critical").Obj(),
		},
		"PriorityClass that does not exist": {
			job:  newJob("j").PriorityClassName("urgent").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.priorityClassName", `Invalid value: "urgent": PriorityClass does not exist`)},
		},
		"unknown plugin": {
			job: newJob("j").Plugin("env").Plugin("horovod").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.NotSupported, "spec.plugins[horovod]",
				`Unsupported value: "horovod": supported values: "env", "hcclrank", "mpi", "pytorch", "ray", "ssh", "svc", "tensorflow"`)},
		},
		"unknown plugin flag": {
			job: newJob("j").Plugin("svc", "--inject-host-env=false").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.plugins[svc]",
				`Invalid value: ["--inject-host-env=false"]: flag provided but not defined: -inject-host-env`)},
		},
		"a plugin's task missing": {
			job: newJob("j").Plugin("mpi").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.plugins[mpi]",
				`Invalid value: []: the master task "master" is not one of the job's tasks (set --master=<task>)`)},
		},
		"task template that cannot become a pod": {
			job:           noImage,
			want:          []metav1.StatusCause{wt.Cause(wt.Required, "spec.tasks[0].template.spec.containers[0].image", "")},
			ignoreMessage: true,
		},
		"privileged containers are left to the API server": {
			job: privileged,
		},
		"errors of the spec itself": {
			job: testingbatch.MakeJob("j", "ns").
				Task(testingbatch.MakeTask("a", 1).DependsOn(batchv1alpha1.IterationAll, "nope")).Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.NotFound, "spec.tasks[0].dependsOn.name[0]", `Not found: "nope"`)},
		},
		"every problem is reported": {
			job: newJob("j").Queue("nope").PriorityClassName("urgent").Plugin("horovod").Obj(),
			want: []metav1.StatusCause{
				wt.Cause(wt.NotSupported, "spec.plugins[horovod]", ""),
				wt.Cause(wt.Invalid, "spec.queue", ""),
				wt.Cause(wt.Invalid, "spec.priorityClassName", ""),
			},
			ignoreMessage: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reader := wt.Reader(t, queues()...)
			if tc.reader != nil {
				reader = tc.reader(t)
			}
			_, err := job.NewWebhook(reader).ValidateCreate(t.Context(), tc.job)
			var opts []cmp.Option
			if tc.ignoreMessage {
				opts = append(opts, wt.IgnoreMessage)
			}
			if diff := cmp.Diff(tc.want, wt.Causes(t, err), opts...); diff != "" {
				t.Errorf("ValidateCreate causes (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateCreateReadFailure(t *testing.T) {
	failing := fake.NewClientBuilder().WithScheme(wt.Scheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("connection refused")
		},
	}).Build()
	_, err := job.NewWebhook(lookup.Reader{Cached: failing}).ValidateCreate(t.Context(), newJob("j").Obj())
	if !apierrors.IsInternalError(err) {
		t.Errorf("ValidateCreate with an unreadable queue: got %v, want an internal error", err)
	}
}

func TestValidateUpdate(t *testing.T) {
	running := newJob("j").Queue("closed").Obj()
	cases := map[string]struct {
		oldJob, newJob *batchv1alpha1.Job
		want           []metav1.StatusCause
	}{
		"scaling a job of a closed queue": {
			oldJob: running,
			newJob: func() *batchv1alpha1.Job {
				j := running.DeepCopy()
				j.Spec.Tasks[0].Replicas = 4
				return j
			}(),
		},
		"changing a task template": {
			oldJob: running,
			newJob: func() *batchv1alpha1.Job {
				j := running.DeepCopy()
				j.Spec.Tasks[0].Template.Spec.Containers[0].Image = "alpine"
				return j
			}(),
			want: []metav1.StatusCause{wt.Cause(wt.Forbidden, "spec.tasks[0]",
				"Forbidden: only replicas, minAvailable and maxRetry of a task may change after the job is created")},
		},
		"a new PriorityClass must exist": {
			oldJob: running,
			newJob: func() *batchv1alpha1.Job {
				j := running.DeepCopy()
				j.Spec.PriorityClassName = "urgent"
				return j
			}(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.priorityClassName", `Invalid value: "urgent": PriorityClass does not exist`)},
		},
		"an unchanged missing PriorityClass is not checked again": {
			oldJob: newJob("j").PriorityClassName("deleted").Obj(),
			newJob: newJob("j").PriorityClassName("deleted").MinAvailable(1).Obj(),
		},
		"re-applying the manifest without defaulted fields": {
			oldJob: func() *batchv1alpha1.Job {
				j := testingbatch.MakeJob("j", "ns").Task(testingbatch.MakeTask("", 2)).Obj()
				batchv1alpha1.SetDefaults_Job(j)
				return j
			}(),
			newJob: testingbatch.MakeJob("j", "ns").Task(testingbatch.MakeTask("", 2)).Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := job.NewWebhook(wt.Reader(t, queues()...))
			_, err := w.ValidateUpdate(t.Context(), tc.oldJob, tc.newJob)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateUpdate causes (-want,+got):\n%s", diff)
			}
		})
	}
}
