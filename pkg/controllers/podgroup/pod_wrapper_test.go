package podgroup

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podWrapper builds a Pod.
type podWrapper struct{ corev1.Pod }

// makePod starts a pending one-container pod for the volcano scheduler,
// with UID "uid-<name>".
func makePod(namespace, name string) *podWrapper {
	return &podWrapper{corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{
			SchedulerName: "volcano",
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}}
}

func (p *podWrapper) Obj() *corev1.Pod { return &p.Pod }

// Scheduler sets spec.schedulerName.
func (p *podWrapper) Scheduler(name string) *podWrapper {
	p.Spec.SchedulerName = name
	return p
}

// ControlledBy adds a controller owner reference.
func (p *podWrapper) ControlledBy(apiVersion, kind, name string, uid types.UID) *podWrapper {
	p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{
		APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: new(true), BlockOwnerDeletion: new(true),
	})
	return p
}

// Annotation sets an annotation.
func (p *podWrapper) Annotation(k, v string) *podWrapper {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[k] = v
	return p
}

// Label sets a label.
func (p *podWrapper) Label(k, v string) *podWrapper {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
	return p
}

// Req sets the container's requests from name/quantity pairs.
func (p *podWrapper) Req(pairs ...string) *podWrapper {
	p.Spec.Containers[0].Resources.Requests = resourceList(pairs...)
	return p
}

// InitReq adds an init container with requests from name/quantity pairs.
func (p *podWrapper) InitReq(pairs ...string) *podWrapper {
	p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{
		Name: "init", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: resourceList(pairs...)},
	})
	return p
}

// PriorityClass sets spec.priorityClassName.
func (p *podWrapper) PriorityClass(name string) *podWrapper {
	p.Spec.PriorityClassName = name
	return p
}

// Created sets the creation time to the given second of a fixed minute.
func (p *podWrapper) Created(second int) *podWrapper {
	p.CreationTimestamp = metav1.Date(2030, 1, 1, 0, 0, second, 0, time.UTC)
	return p
}

// Phase sets status.phase.
func (p *podWrapper) Phase(phase corev1.PodPhase) *podWrapper {
	p.Status.Phase = phase
	return p
}

func resourceList(pairs ...string) corev1.ResourceList {
	rl := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		rl[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return rl
}
