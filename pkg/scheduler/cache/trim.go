package cache

import (
	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
)

// lastAppliedAnnotation is where kubectl apply keeps the whole object as
// last applied: often the largest part of an object's metadata.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// NewTransform returns the transform of the scheduler's informers: before
// an informer keeps an object, it drops what nothing in the scheduler (nor
// kube-scheduler's plugins it runs) reads, and shares what is equal across
// objects (Sharer). Every object loses its managedFields and the
// last-applied annotation; a pod loses more (TrimPod). The scheduler never
// writes an object back from its informers (it binds, evicts and patches
// status), so nothing trimmed is ever lost on the server.
//
// One transform serves every informer of a scheduler, so that they share
// one Sharer.
func NewTransform() toolscache.TransformFunc {
	s := NewSharer()
	return func(obj any) (any, error) {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetManagedFields(nil)
			if a := m.GetAnnotations(); a[lastAppliedAnnotation] != "" {
				delete(a, lastAppliedAnnotation)
			}
		}
		switch o := obj.(type) {
		case *corev1.Pod:
			TrimPod(o)
			s.SharePod(o)
		case *corev1.Node:
			s.ShareNode(o)
		case *metricsv1alpha1.NodeUsage:
			// The scheduler reads the node's totals; each pod's use is
			// for the descheduler.
			o.Pods = nil
		}
		return obj, nil
	}
}

// TrimPod drops, in place, the parts of a pod no scheduling decision reads:
//
//   - of each container: what it runs and how (command, arguments,
//     environment, mounts, probes, lifecycle hooks, security context). Kept:
//     name, image (image locality), ports (host ports), resources, resize
//     and restart policies (a sidecar's requests count differently);
//   - ephemeral containers, which hold no resources;
//   - volumes that no placement depends on: config maps, secrets, projected
//     and downward-API volumes, emptyDirs. Claims, ephemeral volumes, CSI
//     and in-tree disks stay (volume binding, limits, restrictions);
//   - the readiness conditions (Initialized, ContainersReady, Ready,
//     PodReadyToStartContainers); the others stay (PodScheduled,
//     DisruptionTarget, resizes, readiness gates);
//   - of each container's status, all but its name and the resources the
//     kubelet allocated, which count for a pod being resized.
func TrimPod(pod *corev1.Pod) {
	for i := range pod.Spec.InitContainers {
		trimContainer(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		trimContainer(&pod.Spec.Containers[i])
	}
	pod.Spec.EphemeralContainers = nil
	pod.Spec.Volumes = keepVolumes(pod.Spec.Volumes)
	pod.Status.Conditions = keepConditions(pod.Status.Conditions)
	trimStatuses(pod.Status.InitContainerStatuses)
	trimStatuses(pod.Status.ContainerStatuses)
	pod.Status.EphemeralContainerStatuses = nil
}

func trimContainer(c *corev1.Container) {
	*c = corev1.Container{
		Name:               c.Name,
		Image:              c.Image,
		Ports:              c.Ports,
		Resources:          c.Resources,
		ResizePolicy:       c.ResizePolicy,
		RestartPolicy:      c.RestartPolicy,
		RestartPolicyRules: c.RestartPolicyRules,
	}
}

// keepVolumes returns the volumes a placement may depend on. A new slice
// holds them when some are dropped, so that the dropped ones are freed.
func keepVolumes(vs []corev1.Volume) []corev1.Volume {
	return keep(vs, func(v *corev1.Volume) bool {
		s := &v.VolumeSource
		return s.ConfigMap == nil && s.Secret == nil && s.Projected == nil && s.DownwardAPI == nil && s.EmptyDir == nil
	})
}

var readinessConditions = map[corev1.PodConditionType]bool{
	corev1.PodInitialized:            true,
	corev1.ContainersReady:           true,
	corev1.PodReady:                  true,
	corev1.PodReadyToStartContainers: true,
}

func keepConditions(cs []corev1.PodCondition) []corev1.PodCondition {
	return keep(cs, func(c *corev1.PodCondition) bool { return !readinessConditions[c.Type] })
}

// keep returns the elements of s that pass, s itself when all do, nil when
// none does, and otherwise a new slice of just the kept ones.
func keep[T any](s []T, pass func(*T) bool) []T {
	n := 0
	for i := range s {
		if pass(&s[i]) {
			n++
		}
	}
	switch n {
	case len(s):
		return s
	case 0:
		return nil
	}
	out := make([]T, 0, n)
	for i := range s {
		if pass(&s[i]) {
			out = append(out, s[i])
		}
	}
	return out
}

func trimStatuses(ss []corev1.ContainerStatus) {
	for i, s := range ss {
		ss[i] = corev1.ContainerStatus{Name: s.Name, AllocatedResources: s.AllocatedResources, Resources: s.Resources}
	}
}
