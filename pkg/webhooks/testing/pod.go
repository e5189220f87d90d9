package testing

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodWrapper builds a Pod.
type PodWrapper struct{ pod corev1.Pod }

// MakePod starts a pod with one busybox container named "main", scheduled
// by "volcano".
func MakePod(name, namespace string) *PodWrapper {
	return &PodWrapper{pod: corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			SchedulerName: "volcano",
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
		},
	}}
}

// Obj returns a copy of the built Pod.
func (w *PodWrapper) Obj() *corev1.Pod { return w.pod.DeepCopy() }

// SchedulerName sets spec.schedulerName.
func (w *PodWrapper) SchedulerName(name string) *PodWrapper {
	w.pod.Spec.SchedulerName = name
	return w
}

// Annotation sets an annotation.
func (w *PodWrapper) Annotation(key, value string) *PodWrapper {
	if w.pod.Annotations == nil {
		w.pod.Annotations = map[string]string{}
	}
	w.pod.Annotations[key] = value
	return w
}

// Label sets a label.
func (w *PodWrapper) Label(key, value string) *PodWrapper {
	if w.pod.Labels == nil {
		w.pod.Labels = map[string]string{}
	}
	w.pod.Labels[key] = value
	return w
}

// Container adds a busybox container with the given limits (name, value
// pairs), which Kubernetes also takes as its requests.
func (w *PodWrapper) Container(name string, limits ...string) *PodWrapper {
	rl := corev1.ResourceList{}
	for i := 0; i+1 < len(limits); i += 2 {
		rl[corev1.ResourceName(limits[i])] = resource.MustParse(limits[i+1])
	}
	w.pod.Spec.Containers = append(w.pod.Spec.Containers, corev1.Container{Name: name, Image: "busybox", Resources: corev1.ResourceRequirements{Limits: rl}})
	return w
}
