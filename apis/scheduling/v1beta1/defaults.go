package v1beta1

import (
	"strings"
)

// The defaulting functions below fill in what Volcano's admission webhooks and
// queue controller fill in. They are pure and idempotent: applying them twice
// gives the same object as applying them once. The scalar defaults the CRD
// applies by itself (weight, reclaimable, networkTopology.mode, minSubGroups)
// are repeated here so that objects built in Go look like objects read back
// from the API server.

// SetDefaults_Queue defaults a Queue:
//   - weight 1 and reclaimable true when unset;
//   - parent "root" for every queue but root itself;
//   - a legacy hierarchy annotation that does not start at root is rooted,
//     "eng/ml" with weights "2/8" becoming "root/eng/ml" with "1/2/8".
func SetDefaults_Queue(q *Queue) {
	if q.Spec.Weight == 0 {
		q.Spec.Weight = 1
	}
	if q.Spec.Reclaimable == nil {
		q.Spec.Reclaimable = new(true)
	}
	if q.Spec.Parent == "" && q.Name != RootQueue {
		q.Spec.Parent = RootQueue
	}
	rootHierarchy(q)
}

// rootHierarchy prefixes the legacy hierarchy annotations with the root
// segment. Only a complete pair is touched; a lone or mismatched annotation is
// left for validation to report.
func rootHierarchy(q *Queue) {
	path, hasPath := q.Annotations[HierarchyAnnotation]
	weights, hasWeights := q.Annotations[HierarchyWeightsAnnotation]
	if !hasPath || !hasWeights || path == "" || weights == "" {
		return
	}
	// Compare the first segment rather than a string prefix, so that a
	// queue path like "rooted/a" is still placed under root.
	if first, _, _ := strings.Cut(path, "/"); first == RootQueue {
		return
	}
	q.Annotations[HierarchyAnnotation] = RootQueue + "/" + path
	q.Annotations[HierarchyWeightsAnnotation] = "1/" + weights
}

// SetDefaults_PodGroup defaults a PodGroup: queue "default" when unset,
// network-topology mode hard, and minSubGroups 0.
func SetDefaults_PodGroup(pg *PodGroup) {
	SetPodGroupDefaultsInNamespace(pg, nil)
}

// SetPodGroupDefaultsInNamespace is SetDefaults_PodGroup for a PodGroup whose
// namespace has the given annotations: a namespace annotated with
// scheduling.volcano.sh/queue-name sends its PodGroups to that queue instead
// of "default". The caller looks the namespace up; this stays pure.
func SetPodGroupDefaultsInNamespace(pg *PodGroup, namespaceAnnotations map[string]string) {
	if pg.Spec.Queue == "" {
		pg.Spec.Queue = DefaultQueue
		if q := namespaceAnnotations[QueueNameAnnotation]; q != "" {
			pg.Spec.Queue = q
		}
	}
	SetDefaults_NetworkTopologySpec(pg.Spec.NetworkTopology)
	for i := range pg.Spec.SubGroupPolicy {
		p := &pg.Spec.SubGroupPolicy[i]
		SetDefaults_NetworkTopologySpec(p.NetworkTopology)
		if p.MinSubGroups == nil {
			p.MinSubGroups = new(int32(0))
		}
	}
}

// SetDefaults_NetworkTopologySpec defaults the mode of a network-topology
// constraint to hard.
func SetDefaults_NetworkTopologySpec(nt *NetworkTopologySpec) {
	if nt != nil && nt.Mode == "" {
		nt.Mode = HardNetworkTopologyMode
	}
}
