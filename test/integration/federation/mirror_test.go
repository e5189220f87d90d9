//go:build integration

package federation

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/integration/framework"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, framework.Options{Karmada: true, ClusterAPI: true, Users: []string{"caldera-global"}}, &fw))
}

// TestMirrorRoundTrip stores the mirrored Karmada objects in a real API
// server with the mirror's CRDs and reads them back unchanged: a Cluster
// with its resource summary (status subresource), a PropagationPolicy
// with affinity, spread and division, and a ResourceBinding with
// components and both suspensions, whose scheduling suspension a merge
// patch lifts without touching the dispatching one.
func TestMirrorRoundTrip(t *testing.T) {
	ctx := t.Context()
	c := fw.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mirror"}}); err != nil {
		t.Fatal(err)
	}

	cl := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member-1", Labels: map[string]string{"gpu": "h100"}},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:6443",
			SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member-1"}, Region: "eu", Zones: []string{"eu-1a"}},
	}
	if err := c.Create(ctx, cl); err != nil {
		t.Fatal(err)
	}
	cl.Status = clusterv1alpha1.ClusterStatus{
		KubernetesVersion: "v1.37.2",
		Conditions:        []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", Message: "cluster is healthy and ready to accept workloads", LastTransitionTime: metav1.Now()}},
		NodeSummary:       &clusterv1alpha1.NodeSummary{TotalNum: 8, ReadyNum: 8},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("512"), "nvidia.com/gpu": resource.MustParse("64")},
			Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100")},
			Allocating:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
		},
	}
	if err := c.Status().Update(ctx, cl); err != nil {
		t.Fatal(err)
	}
	var gotCluster clusterv1alpha1.Cluster
	if err := c.Get(ctx, client.ObjectKeyFromObject(cl), &gotCluster); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cl.Status.ResourceSummary, gotCluster.Status.ResourceSummary); diff != "" {
		t.Errorf("resource summary (-want,+got):\n%s", diff)
	}
	if gotCluster.Status.NodeSummary.ReadyNum != 8 || gotCluster.Status.Conditions[0].Type != "Ready" {
		t.Errorf("status %+v", gotCluster.Status)
	}

	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "mirror", Name: "train"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "train"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member-1", "member-2"}},
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: "cluster", MaxGroups: 1, MinGroups: 1}},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionAggregated,
				},
			},
		},
	}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	var gotPP policyv1alpha1.PropagationPolicy
	if err := c.Get(ctx, client.ObjectKeyFromObject(pp), &gotPP); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pp.Spec, gotPP.Spec); diff != "" {
		t.Errorf("policy (-want,+got):\n%s", diff)
	}

	yes := true
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "mirror", Name: "train-job"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Namespace: "mirror", Name: "train", UID: "u-1"},
			Replicas: 5,
			Components: []workv1alpha2.Component{
				{Name: "ps", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}},
				{Name: "worker", Replicas: 4, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}}},
			},
			Placement:  &pp.Spec.Placement,
			Suspension: &workv1alpha2.Suspension{Scheduling: &yes, Dispatching: &yes},
		},
	}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	before := rb.DeepCopy()
	patched := rb.DeepCopy()
	no := false
	patched.Spec.Suspension.Scheduling = &no
	if err := c.Patch(ctx, patched, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	var gotRB workv1alpha2.ResourceBinding
	if err := c.Get(ctx, client.ObjectKeyFromObject(rb), &gotRB); err != nil {
		t.Fatal(err)
	}
	want := rb.Spec.DeepCopy()
	want.Suspension.Scheduling = &no
	if diff := cmp.Diff(*want, gotRB.Spec); diff != "" {
		t.Errorf("binding (-want,+got):\n%s", diff)
	}
}
