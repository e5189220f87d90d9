package perf

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// podWrapper builds the benchmark's pods.
type podWrapper struct{ corev1.Pod }

// makePod starts a pod with one container that never runs (kwok only
// pretends).
func makePod(namespace, name string) *podWrapper {
	return &podWrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
		},
	}}
}

// scheduler sets spec.schedulerName.
func (p *podWrapper) scheduler(name string) *podWrapper {
	p.Spec.SchedulerName = name
	return p
}

// requests sets the container's requests.
func (p *podWrapper) requests(rl corev1.ResourceList) *podWrapper {
	p.Spec.Containers[0].Resources.Requests = rl.DeepCopy()
	return p
}

// job labels the pod with the job it belongs to.
func (p *podWrapper) job(name string) *podWrapper {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[jobLabel] = name
	return p
}

// group puts the pod in a PodGroup.
func (p *podWrapper) group(name string) *podWrapper {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] = name
	return p
}

func (p *podWrapper) obj() *corev1.Pod { return &p.Pod }
