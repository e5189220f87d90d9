package qos

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pod(annotation string, requests corev1.ResourceList) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Resources: corev1.ResourceRequirements{Requests: requests},
	}}}}
	if annotation != "" {
		p.Annotations = map[string]string{AnnotationKey: annotation}
	}
	return p
}

func TestOf(t *testing.T) {
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	batch := corev1.ResourceList{BatchCPU: resource.MustParse("1000")}
	for name, tc := range map[string]struct {
		pod   *corev1.Pod
		want  Class
		level int
		err   string
	}{
		"annotated latency-critical":          {pod: pod("LC", cpu), want: LatencyCritical, level: 2},
		"annotated highly latency-sensitive":  {pod: pod("HLS", cpu), want: HighlyLatencySensitive, level: 2},
		"annotated best-effort":               {pod: pod("BE", cpu), want: BestEffort, level: -1},
		"Burstable without annotation":        {pod: pod("", cpu), want: LatencySensitive, level: 1},
		"Kubernetes BestEffort is offline":    {pod: pod("", nil), want: BestEffort, level: -1},
		"batch resources make a pod offline":  {pod: pod("", batch), want: BestEffort, level: -1},
		"the annotation wins over batch":      {pod: pod("LS", batch), want: LatencySensitive, level: 1},
		"unknown value: default and an error": {pod: pod("gold", cpu), want: LatencySensitive, level: 1, err: `annotation volcano.sh/qos-level: unknown QoS level "gold" (known: LC, HLS, LS, BE)`},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Of(tc.pod)
			if got != tc.want || got.Level() != tc.level {
				t.Errorf("Of = %s (level %d), want %s (%d)", got, got.Level(), tc.want, tc.level)
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}
