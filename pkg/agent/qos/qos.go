// Package qos classifies a node's pods for colocation: online pods, which
// must keep their performance, from latency-critical down to
// latency-sensitive, and offline (best-effort) pods, which run on what the
// online pods leave unused and give it back when asked.
//
// A pod names its class in the annotation volcano.sh/qos-level, with
// Volcano's values. Without it, a pod that requests the oversubscribed
// resources (kubernetes.io/batch-cpu, kubernetes.io/batch-memory) is
// offline, a pod of Kubernetes QoS class BestEffort is offline too, and
// any other pod is latency-sensitive.
package qos

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	v1qos "k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
)

// AnnotationKey is the pod annotation naming its class.
const AnnotationKey = "volcano.sh/qos-level"

// The oversubscribed resources the agent publishes on the node; offline
// pods request them instead of cpu and memory.
const (
	BatchCPU    corev1.ResourceName = "kubernetes.io/batch-cpu"
	BatchMemory corev1.ResourceName = "kubernetes.io/batch-memory"
)

// Class is a pod's colocation class.
type Class string

// The classes, most protected first. The strings are Volcano's.
const (
	// LatencyCritical pods get the most CPU weight.
	LatencyCritical Class = "LC"
	// HighlyLatencySensitive pods are treated as latency-critical ones.
	HighlyLatencySensitive Class = "HLS"
	// LatencySensitive pods are the default online class.
	LatencySensitive Class = "LS"
	// BestEffort pods are offline: they run on oversubscribed resources,
	// are throttled first and evicted under pressure.
	BestEffort Class = "BE"
)

// Classes lists every class, most protected first.
func Classes() []Class {
	return []Class{LatencyCritical, HighlyLatencySensitive, LatencySensitive, BestEffort}
}

// Level is the class's numeric level, as Volcano numbers them: 2, 2, 1,
// -1.
func (c Class) Level() int {
	switch c {
	case LatencyCritical, HighlyLatencySensitive:
		return 2
	case LatencySensitive:
		return 1
	case BestEffort:
		return -1
	}
	return 0
}

// Offline reports whether pods of the class are offline work.
func (c Class) Offline() bool { return c == BestEffort }

// Parse reads a class name; an error names the known ones.
func Parse(s string) (Class, error) {
	for _, c := range Classes() {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown QoS level %q (known: %s)", s, strings.Join(Names(), ", "))
}

// Names lists the class names, most protected first.
func Names() []string {
	names := make([]string, 0, 4)
	for _, c := range Classes() {
		names = append(names, string(c))
	}
	return names
}

// Of returns the pod's class: its annotation's, else the default for
// pods like it. err is set when the annotation holds an unknown value;
// the class is then the default.
func Of(pod *corev1.Pod) (Class, error) {
	if v, ok := pod.Annotations[AnnotationKey]; ok {
		c, err := Parse(v)
		if err == nil {
			return c, nil
		}
		return Default(pod), fmt.Errorf("annotation %s: %w", AnnotationKey, err)
	}
	return Default(pod), nil
}

// Default is the class of a pod without the annotation.
func Default(pod *corev1.Pod) Class {
	if RequestsBatch(pod) || KubeQOS(pod) == corev1.PodQOSBestEffort {
		return BestEffort
	}
	return LatencySensitive
}

// RequestsBatch reports whether a container of the pod requests or is
// limited in the oversubscribed resources.
func RequestsBatch(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, rl := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
				if _, ok := rl[BatchCPU]; ok {
					return true
				}
				if _, ok := rl[BatchMemory]; ok {
					return true
				}
			}
		}
	}
	return false
}

// KubeQOS is the pod's Kubernetes QoS class (its status's, else worked out
// as the kubelet does), which decides its cgroup's place under kubepods.
func KubeQOS(pod *corev1.Pod) corev1.PodQOSClass { return v1qos.GetPodQOS(pod) }
