package testing

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// PodWrapper builds a Pod.
type PodWrapper struct{ corev1.Pod }

// MakePod starts a pending pod with one container, for the volcano scheduler.
func MakePod(namespace, name string) *PodWrapper {
	return &PodWrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(namespace + "-" + name)},
		Spec: corev1.PodSpec{
			SchedulerName: "volcano",
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}}
}

// Obj returns the pod.
func (p *PodWrapper) Obj() *corev1.Pod { return &p.Pod }

// Req sets the container's requests from name/quantity pairs.
func (p *PodWrapper) Req(pairs ...string) *PodWrapper {
	rl := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		rl[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	p.Spec.Containers[0].Resources.Requests = rl
	return p
}

// Group puts the pod in a PodGroup.
func (p *PodWrapper) Group(name string) *PodWrapper {
	return p.Annotation(schedulingv1beta1.KubeGroupNameAnnotation, name)
}

// Label sets a label.
func (p *PodWrapper) Label(k, v string) *PodWrapper {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
	return p
}

// Annotation sets an annotation.
func (p *PodWrapper) Annotation(k, v string) *PodWrapper {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[k] = v
	return p
}

// Role sets the pod's task name within its job.
func (p *PodWrapper) Role(role string) *PodWrapper { return p.Annotation("volcano.sh/task-spec", role) }

// Priority sets the pod's priority.
func (p *PodWrapper) Priority(v int32) *PodWrapper {
	p.Spec.Priority = &v
	return p
}

// Node binds the pod to a node and marks it running.
func (p *PodWrapper) Node(name string) *PodWrapper {
	p.Spec.NodeName = name
	p.Status.Phase = corev1.PodRunning
	return p
}

// Created sets the creation time.
func (p *PodWrapper) Created(t metav1.Time) *PodWrapper {
	p.CreationTimestamp = t
	return p
}
