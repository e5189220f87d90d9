package testing

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// PodGroupWrapper builds a PodGroup.
type PodGroupWrapper struct {
	schedulingv1beta1.PodGroup
}

// MakePodGroup starts a PodGroup with the given name and namespace and an
// empty spec: no defaults are applied.
func MakePodGroup(name, namespace string) *PodGroupWrapper {
	return &PodGroupWrapper{schedulingv1beta1.PodGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "PodGroup"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}}
}

// Obj returns the built PodGroup.
func (pg *PodGroupWrapper) Obj() *schedulingv1beta1.PodGroup {
	return &pg.PodGroup
}

// Annotation sets an annotation.
func (pg *PodGroupWrapper) Annotation(k, v string) *PodGroupWrapper {
	if pg.Annotations == nil {
		pg.Annotations = map[string]string{}
	}
	pg.Annotations[k] = v
	return pg
}

// MinMember sets spec.minMember.
func (pg *PodGroupWrapper) MinMember(n int32) *PodGroupWrapper {
	pg.Spec.MinMember = n
	return pg
}

// MinTaskMember sets the spec.minTaskMember entry of a task.
func (pg *PodGroupWrapper) MinTaskMember(task string, n int32) *PodGroupWrapper {
	if pg.Spec.MinTaskMember == nil {
		pg.Spec.MinTaskMember = map[string]int32{}
	}
	pg.Spec.MinTaskMember[task] = n
	return pg
}

// Queue sets spec.queue.
func (pg *PodGroupWrapper) Queue(name string) *PodGroupWrapper {
	pg.Spec.Queue = name
	return pg
}

// PriorityClassName sets spec.priorityClassName.
func (pg *PodGroupWrapper) PriorityClassName(name string) *PodGroupWrapper {
	pg.Spec.PriorityClassName = name
	return pg
}

// MinResources sets spec.minResources.
func (pg *PodGroupWrapper) MinResources(rl corev1.ResourceList) *PodGroupWrapper {
	pg.Spec.MinResources = &rl
	return pg
}

// NetworkTopology sets spec.networkTopology with a tier number.
func (pg *PodGroupWrapper) NetworkTopology(mode schedulingv1beta1.NetworkTopologyMode, highestTierAllowed int32) *PodGroupWrapper {
	pg.Spec.NetworkTopology = &schedulingv1beta1.NetworkTopologySpec{Mode: mode, HighestTierAllowed: new(highestTierAllowed)}
	return pg
}

// NetworkTopologySpec sets spec.networkTopology as given.
func (pg *PodGroupWrapper) NetworkTopologySpec(nt schedulingv1beta1.NetworkTopologySpec) *PodGroupWrapper {
	pg.Spec.NetworkTopology = &nt
	return pg
}

// SubGroupPolicy appends a policy to spec.subGroupPolicy.
func (pg *PodGroupWrapper) SubGroupPolicy(p schedulingv1beta1.SubGroupPolicySpec) *PodGroupWrapper {
	pg.Spec.SubGroupPolicy = append(pg.Spec.SubGroupPolicy, p)
	return pg
}

// Phase sets status.phase.
func (pg *PodGroupWrapper) Phase(p schedulingv1beta1.PodGroupPhase) *PodGroupWrapper {
	pg.Status.Phase = p
	return pg
}
