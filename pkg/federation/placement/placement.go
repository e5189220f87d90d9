// Package placement says which member clusters a Karmada placement allows,
// by Karmada's documented rules: a cluster affinity's clusterNames (when
// given) list the allowed clusters, exclude removes some, the label
// selector matches the Cluster object's labels, and the field selector
// matches its provider, region and zones with In and NotIn; a placement
// with clusterAffinities allows the union of its groups (Karmada tries
// them in order, the dispatcher only needs to know where the job may go);
// a cluster tainted NoSchedule or NoExecute is allowed only to a placement
// tolerating the taint.
package placement

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
)

// Field selector keys.
const (
	FieldProvider = "provider"
	FieldRegion   = "region"
	FieldZone     = "zone"
)

// Allows says whether the placement lets work go to the cluster. A nil
// placement allows every untainted cluster.
func Allows(p *policyv1alpha1.Placement, c *clusterv1alpha1.Cluster) bool {
	var tolerations []corev1.Toleration
	if p != nil {
		tolerations = p.ClusterTolerations
	}
	for i := range c.Spec.Taints {
		t := &c.Spec.Taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(klog.Background(), t, false) }) {
			return false
		}
	}
	if p == nil {
		return true
	}
	if len(p.ClusterAffinities) > 0 {
		for i := range p.ClusterAffinities {
			if affinityAllows(&p.ClusterAffinities[i].ClusterAffinity, c) {
				return true
			}
		}
		return false
	}
	return p.ClusterAffinity == nil || affinityAllows(p.ClusterAffinity, c)
}

func affinityAllows(a *policyv1alpha1.ClusterAffinity, c *clusterv1alpha1.Cluster) bool {
	if len(a.ClusterNames) > 0 && !slices.Contains(a.ClusterNames, c.Name) {
		return false
	}
	if slices.Contains(a.Exclude, c.Name) {
		return false
	}
	if a.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(a.LabelSelector)
		if err != nil || !sel.Matches(labels.Set(c.Labels)) {
			return false
		}
	}
	if a.FieldSelector != nil {
		for _, req := range a.FieldSelector.MatchExpressions {
			if !fieldMatches(req, c) {
				return false
			}
		}
	}
	return true
}

// fieldMatches applies one field requirement. A cluster with several
// zones matches "zone In" only when every zone is listed, and "zone NotIn"
// only when none is.
func fieldMatches(req corev1.NodeSelectorRequirement, c *clusterv1alpha1.Cluster) bool {
	var have []string
	switch req.Key {
	case FieldProvider:
		have = nonEmpty(c.Spec.Provider)
	case FieldRegion:
		have = nonEmpty(c.Spec.Region)
	case FieldZone:
		have = c.Spec.Zones
	default:
		return false
	}
	switch req.Operator {
	case corev1.NodeSelectorOpIn:
		if len(have) == 0 {
			return false
		}
		for _, v := range have {
			if !slices.Contains(req.Values, v) {
				return false
			}
		}
		return true
	case corev1.NodeSelectorOpNotIn:
		for _, v := range have {
			if slices.Contains(req.Values, v) {
				return false
			}
		}
		return true
	}
	return false
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
