//go:build integration

package cli

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controllers/job/core"
)

// podsOf plays the scheduler and kubelet for a job until the test ends: no
// scheduler or node runs here, so it admits the job's PodGroup (Inqueue,
// which lets the job controller create the pods) and writes the phase
// each pending pod of the job reaches.
func podsOf(t *testing.T, ns, job string, phase corev1.PodPhase) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
	})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var j batchv1alpha1.Job
			pg := &schedulingv1beta1.PodGroup{}
			if fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: job}, &j) == nil &&
				fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: core.PodGroupName(&j)}, pg) == nil &&
				(pg.Status.Phase == "" || pg.Status.Phase == schedulingv1beta1.PodGroupPending) {
				pg.Status.Phase = schedulingv1beta1.PodGroupInqueue
				_ = fw.Client.Status().Update(ctx, pg)
			}
			var pods corev1.PodList
			if err := fw.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{batchv1alpha1.JobNameKey: job}); err == nil {
				for i := range pods.Items {
					p := &pods.Items[i]
					if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending && p.Status.Phase != "" {
						continue
					}
					p.Status.Phase = phase
					if phase == corev1.PodFailed {
						p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
							State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.Now()}}}}
					}
					_ = fw.Client.Status().Update(ctx, p) // a conflict is retried on the next round
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
}

// TestJobWait: run, suspend, resume and delete wait with --wait for the
// phase they lead to, or for the job to go; a wait that times out names
// the phase last seen, and a job that ends in failure is an error.
func TestJobWait(t *testing.T) {
	ctx := t.Context()
	const ns = "cli-wait"
	if err := fw.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}

	// Nothing starts its pods: the wait times out.
	out, err := run(t, "-n", ns, "job", "run", "stuck", "--wait", "--timeout", "3s")
	if err == nil || err.Error() != "timed out after 3s waiting for job cli-wait/stuck to be Running; its phase is Pending" {
		t.Errorf("run --wait of a job that cannot start: %v", err)
	}
	if out != "job.batch.volcano.sh/stuck created\n" {
		t.Errorf("run --wait of a job that cannot start printed %q", out)
	}

	podsOf(t, ns, "starter", corev1.PodRunning)
	if got := must(t, "-n", ns, "job", "run", "starter", "--replicas", "2", "--wait"); got != "job.batch.volcano.sh/starter created\njob.batch.volcano.sh/starter is Running\n" {
		t.Errorf("run --wait: %q", got)
	}
	if got := must(t, "-n", ns, "job", "suspend", "starter", "--wait"); got != "job.batch.volcano.sh/starter: AbortJob issued\njob.batch.volcano.sh/starter is Aborted\n" {
		t.Errorf("suspend --wait: %q", got)
	}
	if got := must(t, "-n", ns, "job", "resume", "starter", "--wait", "--timeout", "1m"); got != "job.batch.volcano.sh/starter: ResumeJob issued\njob.batch.volcano.sh/starter is Running\n" {
		t.Errorf("resume --wait: %q", got)
	}
	if got := must(t, "-n", ns, "job", "delete", "starter", "--wait"); got != "job.batch.volcano.sh/starter deleted\n" {
		t.Errorf("delete --wait: %q", got)
	}
	if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "starter"}, &batchv1alpha1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("the job after delete --wait: %v", err)
	}

	// Its pod fails, and its policy terminates it.
	podsOf(t, ns, "fails", corev1.PodFailed)
	out, err = run(t, "-n", ns, "job", "run", "-f", "testdata/job-terminate-on-failure.yaml", "--wait")
	if err == nil || err.Error() != "job cli-wait/fails is Terminated" {
		t.Errorf("run --wait of a job that fails: %v\n%s", err, out)
	}
}
