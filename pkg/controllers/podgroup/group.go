package podgroup

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

const (
	// ManagedByLabel and ManagedByValue mark the PodGroups this controller
	// created. Only those are ever updated or deleted by it; a PodGroup that
	// someone else created under the same name is used as it is.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "caldera-podgroup-controller"
)

// GroupName is the name of the PodGroup a pod that names none belongs to:
// "podgroup-<uid>" of the pod's controller, or of the pod itself when it has
// no controller. Volcano names these PodGroups the same way, and the
// scheduler's one-pod job for a pod without a PodGroup carries the same name,
// so the job keeps its identity when the PodGroup appears.
func GroupName(pod *corev1.Pod) string {
	if ref := metav1.GetControllerOf(pod); ref != nil {
		return batchv1alpha1.PodGroupNamePrefix + string(ref.UID)
	}
	return batchv1alpha1.PodGroupNamePrefix + string(pod.UID)
}

// IsManaged reports whether this controller created pg.
func IsManaged(pg *schedulingv1beta1.PodGroup) bool {
	return pg.Labels[ManagedByLabel] == ManagedByValue
}

// ErrInvalidMinMember is wrapped by the errors of ParseMinMember.
var ErrInvalidMinMember = errors.New("invalid " + schedulingv1beta1.GroupMinMemberAnnotation + " annotation")

// ParseMinMember parses the value of the group-min-member annotation: a
// decimal count of at least 1 that fits spec.minMember. Volcano falls back to
// 1 on a bad value, which silently turns a gang into single pods; the
// controller refuses instead, so the mistake shows.
func ParseMinMember(value string) (int32, error) {
	n, err := strconv.ParseInt(value, 10, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: %q is not a whole number", ErrInvalidMinMember, value)
	case n < 1:
		return 0, fmt.Errorf("%w: %q must be at least 1", ErrInvalidMinMember, value)
	case n > math.MaxInt32:
		return 0, fmt.Errorf("%w: %q must be at most %d", ErrInvalidMinMember, value, math.MaxInt32)
	}
	return int32(n), nil
}

// OrdersPods reports whether a StatefulSet creates its pods one at a time,
// each once the one before is ready (podManagementPolicy OrderedReady, the
// default): such a StatefulSet never has more than one unscheduled pod, so
// a gang of more than one never forms.
func OrdersPods(sts *appsv1.StatefulSet) bool {
	return sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
}

// Workload is what the PodGroup of a group of pods is built from, besides
// the pods: the annotations and labels of their controlling workload. Both
// are nil for a pod without a controller, or whose controller is not a
// ReplicaSet, StatefulSet, DaemonSet or batch Job (the kinds Volcano reads).
type Workload struct {
	Annotations map[string]string
	Labels      map[string]string
}

// Desired returns the PodGroup the controller creates for pod and the other
// pods of its group:
//   - minMember from the workload's group-min-member annotation, 1 without;
//   - queue from the first of: the pod's scheduling.volcano.sh/queue-name
//     annotation, the pod's volcano.sh/queue-name label or annotation, the
//     same keys on the workload, the namespace's scheduling.volcano.sh/queue-name
//     annotation, "default";
//   - priorityClassName from the pod;
//   - minResources: the pod's requests times minMember;
//   - the workload's, then the pod's, volcano.sh/ annotations, and the pod's
//     volcano.sh/ labels;
//   - owned by the pod's controller, or by the pod when it has none.
func Desired(pod *corev1.Pod, w Workload, namespaceAnnotations map[string]string) (*schedulingv1beta1.PodGroup, error) {
	minMember := int32(1)
	if v, ok := w.Annotations[schedulingv1beta1.GroupMinMemberAnnotation]; ok {
		n, err := ParseMinMember(v)
		if err != nil {
			return nil, err
		}
		minMember = n
	}
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       pod.Namespace,
			Name:            GroupName(pod),
			Labels:          map[string]string{},
			OwnerReferences: []metav1.OwnerReference{ownerOf(pod)},
		},
		Spec: schedulingv1beta1.PodGroupSpec{
			MinMember:         minMember,
			Queue:             queueOf(pod, w),
			PriorityClassName: pod.Spec.PriorityClassName,
			MinResources:      MinResources(pod, minMember),
		},
	}
	for k, v := range pod.Labels {
		if strings.HasPrefix(k, schedulingv1beta1.VolcanoPrefix) {
			pg.Labels[k] = v
		}
	}
	pg.Labels[ManagedByLabel] = ManagedByValue
	for _, from := range []map[string]string{w.Annotations, pod.Annotations} {
		for k, v := range from {
			if strings.HasPrefix(k, schedulingv1beta1.VolcanoPrefix) {
				if pg.Annotations == nil {
					pg.Annotations = map[string]string{}
				}
				pg.Annotations[k] = v
			}
		}
	}
	schedulingv1beta1.SetPodGroupDefaultsInNamespace(pg, namespaceAnnotations)
	return pg, nil
}

// ownerOf is the owner of a pod's PodGroup: the pod's controller, so that the
// group lives as long as the workload, or the pod itself. Owner deletion is
// not blocked: that would need the finalizers permission on every owner kind.
func ownerOf(pod *corev1.Pod) metav1.OwnerReference {
	if ref := metav1.GetControllerOf(pod); ref != nil {
		r := *ref
		r.BlockOwnerDeletion = nil
		return r
	}
	return metav1.OwnerReference{
		APIVersion: "v1",
		Kind:       "Pod",
		Name:       pod.Name,
		UID:        pod.UID,
		Controller: new(true),
	}
}

func queueOf(pod *corev1.Pod, w Workload) string {
	for _, q := range []string{
		pod.Annotations[schedulingv1beta1.QueueNameAnnotation],
		pod.Labels[schedulingv1beta1.QueueNameLabel],
		pod.Annotations[schedulingv1beta1.QueueNameLabel],
		w.Annotations[schedulingv1beta1.QueueNameAnnotation],
		w.Labels[schedulingv1beta1.QueueNameLabel],
		w.Annotations[schedulingv1beta1.QueueNameLabel],
	} {
		if q != "" {
			return q
		}
	}
	return ""
}

// MinResources is what minMember pods like pod request, as the scheduler
// counts a pod's requests (init containers, sidecars and overhead included);
// nil when the pod requests nothing.
func MinResources(pod *corev1.Pod, minMember int32) *corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if q.IsZero() {
			continue
		}
		q = q.DeepCopy()
		q.Mul(int64(minMember))
		out[name] = q
	}
	if len(out) == 0 {
		return nil
	}
	return &out
}

// SpecUpdate returns the spec a PodGroup this controller manages should
// have, given the desired PodGroup for its pods now, and whether it differs.
// Only the gang contract follows the workload (minMember and minResources,
// as when its group-min-member annotation is changed); the queue and
// priority are chosen once, at creation.
func SpecUpdate(current, desired *schedulingv1beta1.PodGroup) (schedulingv1beta1.PodGroupSpec, bool) {
	spec := *current.Spec.DeepCopy()
	spec.MinMember = desired.Spec.MinMember
	spec.MinResources = desired.Spec.MinResources
	changed := current.Spec.MinMember != spec.MinMember ||
		!equality.Semantic.DeepEqual(normalise(current.Spec.MinResources), normalise(spec.MinResources))
	return spec, changed
}

func normalise(rl *corev1.ResourceList) corev1.ResourceList {
	if rl == nil || len(*rl) == 0 {
		return nil
	}
	return *rl
}
