package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// highestUserPriority is the highest priority a user's PriorityClass may
// have; above it are the system-critical classes.
const highestUserPriority = 1_000_000_000

// mirrorAnnotation marks the API server's copy of a static pod.
const mirrorAnnotation = "kubernetes.io/config.mirror"

// Unmovable says why a pod may not be evicted to move it, "" when it may:
// it must run, be owned by a controller that recreates it (not a
// DaemonSet, which would put it back on the same node), not be a static
// or system-critical pod, keep no data on the node (emptyDir, hostPath),
// and not belong to a gang (gangMin, its PodGroup's minMember, above 1):
// evicting one member would break the whole job.
func Unmovable(p *corev1.Pod, gangMin int32) string {
	switch {
	case p.Status.Phase != corev1.PodRunning:
		return "not running"
	case p.Annotations[mirrorAnnotation] != "":
		return "static pod"
	case p.Spec.Priority != nil && *p.Spec.Priority > highestUserPriority:
		return "system-critical"
	case gangMin > 1:
		return fmt.Sprintf("gang member (minMember %d)", gangMin)
	}
	owner := metav1.GetControllerOf(p)
	switch {
	case owner == nil:
		return "no controller to recreate it"
	case owner.Kind == "DaemonSet":
		return "DaemonSet pod"
	}
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil || v.HostPath != nil {
			return "keeps data on the node (emptyDir or hostPath)"
		}
	}
	return ""
}
