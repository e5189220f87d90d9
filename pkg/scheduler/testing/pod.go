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

// MakePod starts a pending pod for the volcano scheduler, with one
// container "main" and a UID derived from its namespace and name.
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

// Group puts the pod in a PodGroup.
func (p *PodWrapper) Group(name string) *PodWrapper {
	return p.Annotation(schedulingv1beta1.KubeGroupNameAnnotation, name)
}

// Role sets the pod's task name within its job.
func (p *PodWrapper) Role(role string) *PodWrapper { return p.Annotation("volcano.sh/task-spec", role) }

// Priority sets the pod's priority.
func (p *PodWrapper) Priority(v int32) *PodWrapper {
	p.Spec.Priority = &v
	return p
}

// Created sets the creation time.
func (p *PodWrapper) Created(t metav1.Time) *PodWrapper {
	p.CreationTimestamp = t
	return p
}

// SchedulerName sets spec.schedulerName.
func (p *PodWrapper) SchedulerName(name string) *PodWrapper {
	p.Spec.SchedulerName = name
	return p
}

// Node sets spec.nodeName and nothing else: the phase stays what it was
// (Pending from MakePod), so a pod that runs on the node needs
// .Phase(corev1.PodRunning) as well.
func (p *PodWrapper) Node(name string) *PodWrapper {
	p.Spec.NodeName = name
	return p
}

// Phase sets status.phase.
func (p *PodWrapper) Phase(phase corev1.PodPhase) *PodWrapper {
	p.Status.Phase = phase
	return p
}

// Req adds requests (name/quantity pairs) to the first container.
func (p *PodWrapper) Req(pairs ...string) *PodWrapper {
	addPairs(&p.Spec.Containers[0].Resources.Requests, pairs)
	return p
}

// Limit adds limits (name/quantity pairs) to the first container; extended
// resources such as GPUs need limits equal to their requests.
func (p *PodWrapper) Limit(pairs ...string) *PodWrapper {
	addPairs(&p.Spec.Containers[0].Resources.Limits, pairs)
	return p
}

// addPairs adds name/quantity pairs to a resource list, making it when nil.
func addPairs(l *corev1.ResourceList, pairs []string) {
	if *l == nil {
		*l = corev1.ResourceList{}
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		(*l)[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
}

// Container adds a busybox container with limits (name/quantity pairs),
// which Kubernetes also takes as its requests.
func (p *PodWrapper) Container(name string, limits ...string) *PodWrapper {
	c := corev1.Container{Name: name, Image: "busybox"}
	addPairs(&c.Resources.Limits, limits)
	p.Spec.Containers = append(p.Spec.Containers, c)
	return p
}

// InitReq adds an init container with requests (name/quantity pairs).
func (p *PodWrapper) InitReq(pairs ...string) *PodWrapper {
	c := corev1.Container{Name: "init", Image: "busybox"}
	addPairs(&c.Resources.Requests, pairs)
	p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	return p
}

// PriorityClass sets spec.priorityClassName.
func (p *PodWrapper) PriorityClass(name string) *PodWrapper {
	p.Spec.PriorityClassName = name
	return p
}

// ControlledBy adds a controller owner reference.
func (p *PodWrapper) ControlledBy(apiVersion, kind, name string, uid types.UID) *PodWrapper {
	p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{
		APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: new(true), BlockOwnerDeletion: new(true),
	})
	return p
}

// Image sets the first container's image.
func (p *PodWrapper) Image(image string) *PodWrapper {
	p.Spec.Containers[0].Image = image
	return p
}

// HostPort adds a TCP container port published on the host.
func (p *PodWrapper) HostPort(port int32) *PodWrapper {
	c := &p.Spec.Containers[0]
	c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port, Protocol: corev1.ProtocolTCP})
	return p
}

// PVC mounts the claim as a volume.
func (p *PodWrapper) PVC(claim string) *PodWrapper {
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{
		Name:         claim,
		VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}},
	})
	return p
}

// Toleration adds a toleration; an empty value tolerates with Exists.
func (p *PodWrapper) Toleration(key, value string, effect corev1.TaintEffect) *PodWrapper {
	t := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
	if value != "" {
		t.Operator, t.Value = corev1.TolerationOpEqual, value
	}
	p.Spec.Tolerations = append(p.Spec.Tolerations, t)
	return p
}

// NodeSelector sets a spec.nodeSelector entry.
func (p *PodWrapper) NodeSelector(k, v string) *PodWrapper {
	if p.Spec.NodeSelector == nil {
		p.Spec.NodeSelector = map[string]string{}
	}
	p.Spec.NodeSelector[k] = v
	return p
}

func (p *PodWrapper) affinity() *corev1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	return p.Spec.Affinity
}

// NodeAffinityIn adds a required node-selector term "key In values".
func (p *PodWrapper) NodeAffinityIn(key string, values ...string) *PodWrapper {
	a := p.affinity()
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	if a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	req := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	req.NodeSelectorTerms = append(req.NodeSelectorTerms, corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}},
	})
	return p
}

// PreferredNodeAffinityIn adds a preferred node-selector term "key In values".
func (p *PodWrapper) PreferredNodeAffinityIn(weight int32, key string, values ...string) *PodWrapper {
	a := p.affinity()
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		corev1.PreferredSchedulingTerm{Weight: weight, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}},
		}})
	return p
}

func podAffinityTerm(topologyKey, labelKey, labelValue string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{
		TopologyKey:   topologyKey,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelKey: labelValue}},
	}
}

// PodAffinity requires the pod to share the topology domain with a pod
// labelled labelKey=labelValue.
func (p *PodWrapper) PodAffinity(topologyKey, labelKey, labelValue string) *PodWrapper {
	a := p.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &corev1.PodAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		podAffinityTerm(topologyKey, labelKey, labelValue))
	return p
}

// PodAntiAffinity forbids the pod to share the topology domain with a pod
// labelled labelKey=labelValue.
func (p *PodWrapper) PodAntiAffinity(topologyKey, labelKey, labelValue string) *PodWrapper {
	a := p.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		podAffinityTerm(topologyKey, labelKey, labelValue))
	return p
}

// PreferredPodAntiAffinity prefers the pod not to share the topology domain
// with a pod labelled labelKey=labelValue.
func (p *PodWrapper) PreferredPodAntiAffinity(weight int32, topologyKey, labelKey, labelValue string) *PodWrapper {
	a := p.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: podAffinityTerm(topologyKey, labelKey, labelValue)})
	return p
}

// Spread adds a topology spread constraint over pods labelled
// labelKey=labelValue.
func (p *PodWrapper) Spread(maxSkew int32, topologyKey string, when corev1.UnsatisfiableConstraintAction, labelKey, labelValue string) *PodWrapper {
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
		MaxSkew:           maxSkew,
		TopologyKey:       topologyKey,
		WhenUnsatisfiable: when,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{labelKey: labelValue}},
	})
	return p
}

// SpreadNodeAffinityPolicy sets the node-affinity inclusion policy of the
// last spread constraint.
func (p *PodWrapper) SpreadNodeAffinityPolicy(policy corev1.NodeInclusionPolicy) *PodWrapper {
	c := &p.Spec.TopologySpreadConstraints[len(p.Spec.TopologySpreadConstraints)-1]
	c.NodeAffinityPolicy = &policy
	return p
}
