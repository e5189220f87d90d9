package model

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
)

func cluster(name string, ready metav1.ConditionStatus, allocatable, allocated corev1.ResourceList) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if ready != "" {
		c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: ready, Reason: "ClusterReady", Message: "cluster is healthy and ready to accept workloads"}}
	}
	if allocatable != nil {
		c.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{Allocatable: allocatable, Allocated: allocated}
		c.Status.NodeSummary = &clusterv1alpha1.NodeSummary{TotalNum: 4, ReadyNum: 3}
	}
	return c
}

// binding is a binding of the Job ns/name, its scheduling suspended when
// suspended, marked held since heldSince when that is not zero, placed on
// the clusters.
func binding(ns, name string, suspended bool, heldSince time.Time, queue string, clusters ...string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-job", Annotations: map[string]string{}}}
	rb.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Namespace: ns, Name: name, UID: "uid-" + name}
	if suspended {
		rb.Spec.Suspension = &workv1alpha2.Suspension{Scheduling: ptr.To(true)}
	}
	if !heldSince.IsZero() {
		rb.Annotations[dispatch.HeldSinceAnnotation] = heldSince.Format(time.RFC3339)
	}
	if queue != "" {
		rb.Annotations[dispatch.QueueOfBindingAnnotation] = queue
	}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c})
	}
	return rb
}

func holdEvent(ns, name, uid, reason, message string, at time.Time) *corev1.Event {
	return &corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "Job", Namespace: ns, Name: name, UID: types.UID(uid)},
		Reason:         reason, Message: message, LastTimestamp: metav1.NewTime(at),
	}
}

func TestFederation(t *testing.T) {
	in := Input{Now: now, Federation: &FederationInput{
		Host: "https://karmada.example:5443",
		Clusters: []*clusterv1alpha1.Cluster{
			cluster("member-2", metav1.ConditionFalse, rl("cpu", "64"), nil),
			cluster("member-1", metav1.ConditionTrue, rl("cpu", "32", "memory", "128Gi", "pods", "110"), rl("cpu", "24", "memory", "32Gi")),
			cluster("member-3", "", nil, nil),
		},
		Bindings: []*workv1alpha2.ResourceBinding{
			// Placed by caldera-global: still suspended, with its cluster.
			binding("team-a", "placed", true, time.Time{}, "research", "member-1"),
			// Placed by Karmada's scheduler (not queued work), over two.
			binding("team-a", "spread", false, time.Time{}, "", "member-1", "member-2"),
			// Neither held nor placed: Karmada has not scheduled it yet.
			binding("team-a", "unscheduled", false, time.Time{}, ""),
			binding("team-a", "capped", true, now.Add(-90*time.Minute), "research"),
			binding("team-b", "unfit", true, now.Add(-30*time.Second), "prod"),
			binding("team-b", "fresh", true, time.Time{}, "prod"),
			binding("team-b", "stale-uid", true, now.Add(-time.Minute), "prod"),
		},
		Events: []*corev1.Event{
			holdEvent("team-a", "capped", "uid-capped", string(dispatch.RuleNoClusterFits), "held: no Ready cluster has cpu 40 free", now.Add(-time.Hour)),
			// The latest reason wins.
			holdEvent("team-a", "capped", "uid-capped", string(dispatch.RuleCapability), `held: queue "research" would hold cpu 40, over its capability by cpu 8`, now.Add(-time.Minute)),
			holdEvent("team-b", "unfit", "uid-unfit", string(dispatch.RuleNoClusterFits), "held: no Ready cluster has cpu 100 free", now.Add(-20*time.Second)),
			// Events that are no hold: another reason, or not "held: ".
			holdEvent("team-b", "fresh", "uid-fresh", "Released", "released to member-1", now),
			holdEvent("team-b", "fresh", "uid-fresh", string(dispatch.RuleGang), "something else", now),
			// An event of an earlier Job of the same name.
			holdEvent("team-b", "stale-uid", "uid-older", string(dispatch.RuleQueueClosed), `held: queue "prod" is closed`, now),
		},
	}}
	f := Build(in).Federation()
	if !f.Enabled || f.Host != "https://karmada.example:5443" {
		t.Errorf("enabled %v host %q", f.Enabled, f.Host)
	}
	wantMembers := []Member{
		{Name: "member-1", Ready: true, Condition: "ClusterReady: cluster is healthy and ready to accept workloads", Nodes: 4, ReadyNodes: 3, Bindings: 2,
			Resources: []Usage{{Resource: "cpu", Allocatable: "32", Requested: "24", Use: 0.75}, {Resource: "memory", Allocatable: "128Gi", Requested: "32Gi", Use: 0.25}}},
		{Name: "member-2", Condition: "ClusterReady: cluster is healthy and ready to accept workloads", Nodes: 4, ReadyNodes: 3, Bindings: 1,
			Resources: []Usage{{Resource: "cpu", Allocatable: "64", Requested: "0"}}},
		{Name: "member-3", Resources: []Usage{}},
	}
	if diff := cmp.Diff(wantMembers, f.Members); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if f.Placed != 2 {
		t.Errorf("placed %d, want 2", f.Placed)
	}
	at := func(d time.Duration) *time.Time { x := now.Add(d).UTC(); return &x }
	wantHeld := []HeldBinding{
		{Namespace: "team-a", Name: "capped-job", Kind: "Job", Workload: "capped", Queue: "research", HeldSince: at(-90 * time.Minute), Waiting: "90m",
			Rule: string(dispatch.RuleCapability), Reason: `queue "research" would hold cpu 40, over its capability by cpu 8`},
		{Namespace: "team-b", Name: "stale-uid-job", Kind: "Job", Workload: "stale-uid", Queue: "prod", HeldSince: at(-time.Minute), Waiting: "60s"},
		{Namespace: "team-b", Name: "unfit-job", Kind: "Job", Workload: "unfit", Queue: "prod", HeldSince: at(-30 * time.Second), Waiting: "30s",
			Rule: string(dispatch.RuleNoClusterFits), Reason: "no Ready cluster has cpu 100 free"},
		{Namespace: "team-b", Name: "fresh-job", Kind: "Job", Workload: "fresh", Queue: "prod"},
	}
	if diff := cmp.Diff(wantHeld, f.Held); diff != "" {
		t.Errorf("held (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"": 2, string(dispatch.RuleCapability): 1, string(dispatch.RuleNoClusterFits): 1}, f.HeldByRule); diff != "" {
		t.Errorf("held by rule (-want +got):\n%s", diff)
	}
	tot := Build(in).Totals()
	if tot.Members != 3 || tot.ReadyMembers != 1 || tot.HeldBindings != 4 {
		t.Errorf("totals: members %d ready %d held %d, want 3 1 4", tot.Members, tot.ReadyMembers, tot.HeldBindings)
	}
}

func TestFederationNotWatched(t *testing.T) {
	f := Build(Input{Now: now}).Federation()
	if f.Enabled || f.Members == nil || f.Held == nil {
		t.Errorf("without a Karmada API server: %+v, want disabled with empty lists", f)
	}
}
