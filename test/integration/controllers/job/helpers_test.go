//go:build integration

package job

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	"github.com/caldera-sh/caldera/test/poll"
)

// task is a task whose pods run for run (forever when empty) and then exit
// with code exit, as kwok makes them.
func task(name string, replicas int32, run string, exit int) batchv1alpha1.TaskSpec {
	ann := map[string]string{}
	if run != "" {
		ann["pod.caldera.sh/run-duration"] = run
		ann["pod.caldera.sh/exit-code"] = strconv.Itoa(exit)
	}
	return batchv1alpha1.TaskSpec{
		Name:     name,
		Replicas: replicas,
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: ann},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				}}},
			},
		},
	}
}

func newJob(ns, name string, tasks ...batchv1alpha1.TaskSpec) *batchv1alpha1.Job {
	return &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       batchv1alpha1.JobSpec{SchedulerName: "volcano", Queue: "default", Tasks: tasks},
	}
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("job-%d", time.Now().UnixNano()%1e9)
	if err := fw.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return ns
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := fw.Client.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

func getJob(t *testing.T, ns, name string) *batchv1alpha1.Job {
	t.Helper()
	var j batchv1alpha1.Job
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &j); err != nil {
		t.Fatal(err)
	}
	return &j
}

// waitPhase waits until the Job reaches phase.
func waitPhase(t *testing.T, ns, name string, phase batchv1alpha1.JobPhase, timeout time.Duration) *batchv1alpha1.Job {
	t.Helper()
	var j batchv1alpha1.Job
	poll.Eventually(t, t.Context(), timeout, fmt.Sprintf("job %s/%s %s", ns, name, phase), func() (bool, string) {
		err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &j)
		if err == nil && j.Status.State.Phase == phase {
			return true, ""
		}
		return false, fmt.Sprintf("phase %q, status %+v, err %v", j.Status.State.Phase, j.Status, err)
	})
	return &j
}

func podsOf(t *testing.T, ns, job string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := fw.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{batchv1alpha1.JobNameKey: job}); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}
