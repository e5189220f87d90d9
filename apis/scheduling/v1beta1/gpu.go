package v1beta1

import corev1 "k8s.io/api/core/v1"

// GPU sharing, as Volcano's device plugin for NVIDIA GPUs names it: a node
// offers GPUNumberResource cards and GPUMemoryResource of memory over all
// of them; a pod asks for a share of one card's memory or for whole cards,
// and is told its cards in GPUIndexAnnotation.
const (
	// GPUMemoryResource is a pod's share of one card, or a node's memory
	// over all its cards (MiB).
	GPUMemoryResource corev1.ResourceName = "volcano.sh/gpu-memory"
	// GPUNumberResource is a pod's count of whole cards, or a node's count
	// of cards.
	GPUNumberResource corev1.ResourceName = "volcano.sh/gpu-number"
	// GPUIndexAnnotation, on a pod, lists the cards it was given: "0",
	// "0,3".
	GPUIndexAnnotation = VolcanoPrefix + "gpu-index"
	// GPUPredicateTimeAnnotation, on a pod, is when its cards were chosen
	// (Unix nanoseconds).
	GPUPredicateTimeAnnotation = VolcanoPrefix + "predicate-time"
	// GPUUnhealthyAnnotation, on a node, lists its unhealthy cards.
	GPUUnhealthyAnnotation = VolcanoPrefix + "gpu-unhealthy-ids"
)
