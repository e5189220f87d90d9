//go:build integration

package cronjob

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	bt "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	"github.com/caldera-sh/caldera/pkg/controllers/cronjob"
	"github.com/caldera-sh/caldera/pkg/controllers/cronjob/core"
	"github.com/caldera-sh/caldera/test/poll"
)

// startController runs the CronJob controller on a fake clock until the
// returned stop is called.
func startController(t *testing.T, clk *clocktesting.FakeClock) (stop func()) {
	t.Helper()
	mgr, err := ctrl.NewManager(fw.RESTConfig(), ctrl.Options{
		Scheme: fw.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		// The test starts the controller again after stopping it.
		Controller: config.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cronjob.NewReconciler(mgr.GetClient(), mgr.GetEventRecorderFor("caldera-cronjob-controller"), clk).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
}

// TestCronJobRunsOnItsSchedule: on a fake clock, a Forbid CronJob every 5
// minutes starts a Job at its time, holds the next run while that Job is
// active and starts it once the Job completes; a controller restart
// starts no run twice; the history limit removes the oldest Job.
func TestCronJobRunsOnItsSchedule(t *testing.T) {
	ctx := t.Context()
	ns := fmt.Sprintf("cron-%d", time.Now().UnixNano()%1e9)
	if err := fw.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	stop := startController(t, clk)
	defer func() { stop() }()

	cj := &batchv1alpha1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "report"},
		Spec: batchv1alpha1.CronJobSpec{
			Schedule: "*/5 * * * *", ConcurrencyPolicy: batchv1alpha1.ForbidConcurrent, SuccessfulJobsHistoryLimit: new(int32(1)),
			JobTemplate: batchv1alpha1.JobTemplateSpec{Spec: bt.MakeJob("", "").Task(bt.MakeTask("w", 1)).Obj().Spec},
		},
	}
	if err := fw.Client.Create(ctx, cj); err != nil {
		t.Fatal(err)
	}
	// tick moves the clock to the next run's time and nudges the CronJob
	// so that the controller looks at it now.
	ticks := 0
	tick := func() time.Time {
		t.Helper()
		now := clk.Now()
		next := now.Truncate(5 * time.Minute).Add(5 * time.Minute)
		clk.SetTime(next.Add(time.Second))
		ticks++
		patch := client.MergeFrom(cj.DeepCopy())
		if cj.Annotations == nil {
			cj.Annotations = map[string]string{}
		}
		cj.Annotations["test/tick"] = strconv.Itoa(ticks)
		if err := fw.Client.Patch(ctx, cj, patch); err != nil {
			t.Fatal(err)
		}
		return next
	}
	status := func() batchv1alpha1.CronJobStatus {
		var got batchv1alpha1.CronJob
		if err := fw.Client.Get(ctx, client.ObjectKeyFromObject(cj), &got); err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	jobs := func() []batchv1alpha1.Job {
		var l batchv1alpha1.JobList
		if err := fw.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		return l.Items
	}

	first := tick()
	firstName := "report-" + strconv.FormatInt(first.Unix()/60, 10)
	poll.Eventually(t, t.Context(), 30*time.Second, "the first run's Job", func() (bool, string) {
		st := status()
		return len(st.Active) == 1 && st.Active[0].Name == firstName && st.LastScheduleTime != nil && st.LastScheduleTime.Time.Equal(first),
			fmt.Sprintf("%+v", st)
	})
	var j batchv1alpha1.Job
	if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: firstName}, &j); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(&j); ref == nil || ref.UID != cj.UID || j.Annotations[core.ScheduledTimeAnnotation] != first.UTC().Format(time.RFC3339) {
		t.Errorf("job owner %v annotations %v", ref, j.Annotations)
	}

	// The controller restarts; the next run is due while the first Job
	// runs: Forbid holds it, and says so.
	stop()
	stop = startController(t, clk)
	second := tick()
	poll.Eventually(t, t.Context(), 30*time.Second, "the held run's event", func() (bool, string) {
		var evs corev1.EventList
		if err := fw.Client.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Reason == "JobAlreadyActive" && e.InvolvedObject.Name == "report" {
				return true, e.Message
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})
	if n := len(jobs()); n != 1 {
		t.Fatalf("%d jobs while the first is active under Forbid", n)
	}

	// The first Job completes: the held run starts.
	j.Status.State = batchv1alpha1.JobState{Phase: batchv1alpha1.JobCompleted, LastTransitionTime: metav1.NewTime(clk.Now())}
	if err := fw.Client.Status().Update(ctx, &j); err != nil {
		t.Fatal(err)
	}
	secondName := "report-" + strconv.FormatInt(second.Unix()/60, 10)
	poll.Eventually(t, t.Context(), 30*time.Second, "the held run started", func() (bool, string) {
		st := status()
		return len(st.Active) == 1 && st.Active[0].Name == secondName && st.LastSuccessfulTime != nil, fmt.Sprintf("%+v", st)
	})

	// The second completes too: with a history of 1, the first goes.
	var j2 batchv1alpha1.Job
	if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: secondName}, &j2); err != nil {
		t.Fatal(err)
	}
	j2.Status.State = batchv1alpha1.JobState{Phase: batchv1alpha1.JobCompleted, LastTransitionTime: metav1.NewTime(clk.Now())}
	if err := fw.Client.Status().Update(ctx, &j2); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "only the latest completed Job kept", func() (bool, string) {
		js := jobs()
		var left []string
		for _, x := range js {
			if x.DeletionTimestamp == nil {
				left = append(left, x.Name)
			}
		}
		return len(left) == 1 && left[0] == secondName, fmt.Sprint(left)
	})

	// The template's queue and tasks may change (the Job's own rules do
	// not bind a template). The controller writes the CronJob's status
	// meanwhile, so a stale read is read again, as kubectl edit would.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cj2 := &batchv1alpha1.CronJob{}
		if err := fw.Client.Get(ctx, client.ObjectKeyFromObject(cj), cj2); err != nil {
			return err
		}
		cj2.Spec.JobTemplate.Spec.Queue = "other"
		cj2.Spec.JobTemplate.Spec.Tasks = append(cj2.Spec.JobTemplate.Spec.Tasks, bt.MakeTask("x", 1).Obj())
		return fw.Client.Update(ctx, cj2)
	})
	if err != nil {
		t.Errorf("changing the template's queue and tasks: %v", err)
	}
}
