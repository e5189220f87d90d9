//go:build integration

package controlplane

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/test/poll"
)

func TestNodesAreReadyWithTheirCapacity(t *testing.T) {
	var n corev1.Node
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: "gpu-0"}, &n); err != nil {
		t.Fatal(err)
	}
	gpus := n.Status.Allocatable["nvidia.com/gpu"]
	if gpus.Cmp(resource.MustParse("8")) != 0 {
		t.Errorf("allocatable nvidia.com/gpu = %s, want 8", gpus.String())
	}
	if diff := cmp.Diff([]corev1.Taint{{Key: "kwok.x-k8s.io/node", Value: "fake", Effect: corev1.TaintEffectNoSchedule}}, n.Spec.Taints); diff != "" {
		t.Errorf("taints (-want,+got):\n%s", diff)
	}
	if got := n.Labels["nvidia.com/gpu.product"]; got != "A100" {
		t.Errorf("label nvidia.com/gpu.product = %q, want A100", got)
	}
}

func TestPodLifecycle(t *testing.T) {
	cases := map[string]struct {
		annotations  map[string]string
		wantPhase    corev1.PodPhase
		wantExitCode int32
		wantReason   string
	}{
		"runs until deleted without a run duration": {
			wantPhase: corev1.PodRunning,
		},
		"succeeds after its run duration": {
			annotations: map[string]string{"pod.caldera.sh/run-duration": "1s"},
			wantPhase:   corev1.PodSucceeded,
		},
		"fails with its exit code": {
			annotations:  map[string]string{"pod.caldera.sh/run-duration": "1s", "pod.caldera.sh/exit-code": "3"},
			wantPhase:    corev1.PodFailed,
			wantExitCode: 3,
			wantReason:   "Error",
		},
		"is OOM-killed with its exit reason": {
			annotations: map[string]string{"pod.caldera.sh/run-duration": "1s", "pod.caldera.sh/exit-code": "137",
				"pod.caldera.sh/exit-reason": "OOMKilled"},
			wantPhase:    corev1.PodFailed,
			wantExitCode: 137,
			wantReason:   "OOMKilled",
		},
	}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("lifecycle-%d", i), Namespace: "default", Annotations: tc.annotations},
				Spec: corev1.PodSpec{
					NodeName:   "cpu-0",
					Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
				},
			}
			if err := fw.Client.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
			got := waitPod(t, client.ObjectKeyFromObject(pod), func(p *corev1.Pod) bool { return p.Status.Phase == tc.wantPhase })
			if tc.wantPhase == corev1.PodRunning {
				// Stays running: no stage ends it, in twice the others'
				// run duration.
				poll.Consistently(t, ctx, 2*time.Second, "the pod Running", func() (bool, string) {
					if err := fw.Client.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
						return false, err.Error()
					}
					return got.Status.Phase == corev1.PodRunning, fmt.Sprintf("phase %s", got.Status.Phase)
				})
				if got.Status.PodIP == "" {
					t.Errorf("running pod has no pod IP")
				}
			}
			if tc.wantPhase == corev1.PodFailed {
				if len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].State.Terminated == nil {
					t.Fatalf("container statuses = %+v, want one terminated", got.Status.ContainerStatuses)
				}
				if code := got.Status.ContainerStatuses[0].State.Terminated.ExitCode; code != tc.wantExitCode {
					t.Errorf("exit code = %d, want %d", code, tc.wantExitCode)
				}
				if r := got.Status.ContainerStatuses[0].State.Terminated.Reason; r != tc.wantReason {
					t.Errorf("reason = %q, want %q", r, tc.wantReason)
				}
			}
			if err := fw.Client.Delete(ctx, pod); err != nil {
				t.Fatal(err)
			}
			waitGone(t, pod)
		})
	}
}

func waitPod(t *testing.T, key client.ObjectKey, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var p corev1.Pod
	poll.Eventually(t, t.Context(), 30*time.Second, fmt.Sprintf("pod %s's condition", key), func() (bool, string) {
		err := fw.Client.Get(t.Context(), key, &p)
		return err == nil && cond(&p), fmt.Sprintf("phase %s, err %v", p.Status.Phase, err)
	})
	return &p
}

func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	poll.Eventually(t, t.Context(), 30*time.Second, obj.GetName()+" gone", func() (bool, string) {
		err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), fmt.Sprintf("still exists (err %v)", err)
	})
}
