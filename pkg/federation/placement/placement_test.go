package placement

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
)

func TestAllows(t *testing.T) {
	gpu := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-east", Labels: map[string]string{"accelerator": "h100"}},
		Spec:       clusterv1alpha1.ClusterSpec{Provider: "aws", Region: "us-east-1", Zones: []string{"us-east-1a", "us-east-1b"}},
	}
	tainted := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "maint"},
		Spec:       clusterv1alpha1.ClusterSpec{Taints: []corev1.Taint{{Key: "maintenance", Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
	}
	field := func(key string, op corev1.NodeSelectorOperator, values ...string) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}},
		}}}
	}
	for _, tc := range []struct {
		name    string
		p       *policyv1alpha1.Placement
		c       *clusterv1alpha1.Cluster
		allowed bool
	}{
		{"no placement", nil, gpu, true},
		{"no affinity", &policyv1alpha1.Placement{}, gpu, true},
		{"named", &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"gpu-east"}}}, gpu, true},
		{"not named", &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"cpu-west"}}}, gpu, false},
		{"excluded", &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{Exclude: []string{"gpu-east"}}}, gpu, false},
		{"label match", &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"accelerator": "h100"}}}}, gpu, true},
		{"label mismatch", &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"accelerator": "a100"}}}}, gpu, false},
		{"provider in", field(FieldProvider, corev1.NodeSelectorOpIn, "aws", "gcp"), gpu, true},
		{"region not in", field(FieldRegion, corev1.NodeSelectorOpNotIn, "us-east-1"), gpu, false},
		{"all zones listed", field(FieldZone, corev1.NodeSelectorOpIn, "us-east-1a", "us-east-1b"), gpu, true},
		{"one zone not listed", field(FieldZone, corev1.NodeSelectorOpIn, "us-east-1a"), gpu, false},
		{"zone not in", field(FieldZone, corev1.NodeSelectorOpNotIn, "eu-west-1a"), gpu, true},
		{"unknown field", field("rack", corev1.NodeSelectorOpIn, "r1"), gpu, false},
		{"second affinity group", &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
			{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"cpu-west"}}},
			{AffinityName: "backup", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"gpu-east"}}},
		}}, gpu, true},
		{"no affinity group", &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
			{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"cpu-west"}}},
		}}, gpu, false},
		{"taint not tolerated", nil, tainted, false},
		{"taint tolerated", &policyv1alpha1.Placement{ClusterTolerations: []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}, tainted, true},
	} {
		if got := Allows(tc.p, tc.c); got != tc.allowed {
			t.Errorf("%s: Allows = %v, want %v", tc.name, got, tc.allowed)
		}
	}
}
