//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	"github.com/caldera-sh/caldera/deploy/global"
	"github.com/caldera-sh/caldera/pkg/federation/inventory"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/config/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/luatest"
)

// standIn does, for the tests only, the part of Karmada's controllers the
// federation needs, by Karmada's documented rules: a Volcano Job matched by
// a PropagationPolicy gets a ResourceBinding named <job>-job (its
// components, one per task, from the Job's interpreter customization in
// deploy/global, as Karmada does with its MultiplePodTemplatesScheduling
// gate on);
// a binding whose scheduling is not suspended goes to the Ready cluster of
// its affinity with the most free CPU that holds it; a placed binding's Job
// is applied to its member, and the member's Job status copied back. Each
// member's Cluster object carries the member's nodes' and pods' resource
// summary. It is never shipped.
type standIn struct {
	karmada client.Client
	members map[string]client.Client
	access  map[string]memberAccess
	script  string

	mu   sync.Mutex
	down map[string]bool
}

func newStandIn(karmada client.Client, members map[string]client.Client, access map[string]memberAccess) (*standIn, error) {
	raw, err := global.Manifests.ReadFile("karmada/job-interpreter.yaml")
	if err != nil {
		return nil, err
	}
	var ric configv1alpha1.ResourceInterpreterCustomization
	if err := yaml.UnmarshalStrict(raw, &ric); err != nil {
		return nil, err
	}
	return &standIn{karmada: karmada, members: members, access: access, script: ric.Spec.Customizations.ComponentResource.LuaScript, down: map[string]bool{}}, nil
}

// setDown reports a member NotReady (or Ready again).
func (s *standIn) setDown(name string, down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down[name] = down
}

func (s *standIn) isDown(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down[name]
}

// run does its rounds until ctx ends; errors of a round are retried the
// next.
func (s *standIn) run(ctx context.Context) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		_ = s.clusters(ctx)
		_ = s.bindings(ctx)
		_ = s.place(ctx)
		_ = s.apply(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// clusters writes each member's Cluster with its resource summary.
func (s *standIn) clusters(ctx context.Context) error {
	for name, mc := range s.members {
		var nodes corev1.NodeList
		var pods corev1.PodList
		if err := mc.List(ctx, &nodes); err != nil {
			return err
		}
		if err := mc.List(ctx, &pods); err != nil {
			return err
		}
		sum := clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{}, Allocated: corev1.ResourceList{}, Allocating: corev1.ResourceList{}}
		for _, n := range nodes.Items {
			addList(sum.Allocatable, n.Status.Allocatable)
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			into := sum.Allocated
			if p.Spec.NodeName == "" {
				into = sum.Allocating
			}
			for _, c := range p.Spec.Containers {
				addList(into, c.Resources.Requests)
			}
		}
		cl := &clusterv1alpha1.Cluster{}
		err := s.karmada.Get(ctx, client.ObjectKey{Name: name}, cl)
		if apierrors.IsNotFound(err) {
			// As karmadactl join: the member's credentials in
			// karmada-cluster, named by the Cluster.
			a := s.access[name]
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: name},
				Data: map[string][]byte{inventory.SecretTokenKey: []byte(a.token), inventory.SecretCABundleKey: a.ca}}
			if err := s.karmada.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			cl = &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push,
				APIEndpoint: a.endpoint, SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: name}}}
			if err := s.karmada.Create(ctx, cl); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		ready := metav1.ConditionTrue
		if s.isDown(name) {
			ready = metav1.ConditionFalse
		}
		cond := metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: ready, Reason: "StandIn", LastTransitionTime: metav1.Now()}
		if len(cl.Status.Conditions) == 1 && cl.Status.Conditions[0].Status == ready {
			cond.LastTransitionTime = cl.Status.Conditions[0].LastTransitionTime
		}
		cl.Status = clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{cond}, ResourceSummary: &sum,
			NodeSummary: &clusterv1alpha1.NodeSummary{TotalNum: int32(len(nodes.Items)), ReadyNum: int32(len(nodes.Items))}}
		if err := s.karmada.Status().Update(ctx, cl); err != nil {
			return err
		}
	}
	return nil
}

func addList(to, from corev1.ResourceList) {
	for k, q := range from {
		cur := to[k]
		cur.Add(q)
		to[k] = cur
	}
}

// bindings creates the binding of each Job a policy matches.
func (s *standIn) bindings(ctx context.Context) error {
	var jobs batchv1alpha1.JobList
	if err := s.karmada.List(ctx, &jobs); err != nil {
		return err
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		var pps policyv1alpha1.PropagationPolicyList
		if err := s.karmada.List(ctx, &pps, client.InNamespace(j.Namespace)); err != nil {
			return err
		}
		var pp *policyv1alpha1.PropagationPolicy
		for k := range pps.Items {
			for _, sel := range pps.Items[k].Spec.ResourceSelectors {
				if sel.APIVersion == batchv1alpha1.SchemeGroupVersion.String() && sel.Kind == "Job" && (sel.Name == "" || sel.Name == j.Name) {
					pp = &pps.Items[k]
				}
			}
		}
		if pp == nil {
			continue
		}
		rb := &workv1alpha2.ResourceBinding{}
		err := s.karmada.Get(ctx, client.ObjectKey{Namespace: j.Namespace, Name: j.Name + "-job"}, rb)
		if err == nil || !apierrors.IsNotFound(err) {
			continue
		}
		components, err := s.components(j)
		if err != nil {
			return err
		}
		rb = &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: j.Name + "-job"},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource:   workv1alpha2.ObjectReference{APIVersion: batchv1alpha1.SchemeGroupVersion.String(), Kind: "Job", Namespace: j.Namespace, Name: j.Name, UID: string(j.UID)},
				Components: components,
				Placement:  pp.Spec.Placement.DeepCopy(),
			},
		}
		if err := s.karmada.Create(ctx, rb); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// components runs the Job's GetComponents script.
func (s *standIn) components(j *batchv1alpha1.Job) ([]workv1alpha2.Component, error) {
	obj, err := luatest.JSON(j)
	if err != nil {
		return nil, err
	}
	out, err := luatest.Call(s.script, "GetComponents", 1, obj)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(out[0])
	if err != nil {
		return nil, err
	}
	var components []workv1alpha2.Component
	return components, json.Unmarshal(raw, &components)
}

// request is the whole binding's request: every component's replicas.
func request(rb *workv1alpha2.ResourceBinding) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range rb.Spec.Components {
		if c.ReplicaRequirements == nil {
			continue
		}
		for name, q := range c.ReplicaRequirements.ResourceRequest {
			sum := out[name]
			for range c.Replicas {
				sum.Add(q)
			}
			out[name] = sum
		}
	}
	return out
}

// place schedules each released, unplaced binding.
func (s *standIn) place(ctx context.Context) error {
	var rbs workv1alpha2.ResourceBindingList
	var cls clusterv1alpha1.ClusterList
	if err := s.karmada.List(ctx, &rbs); err != nil {
		return err
	}
	if err := s.karmada.List(ctx, &cls); err != nil {
		return err
	}
	for i := range rbs.Items {
		rb := &rbs.Items[i]
		if len(rb.Spec.Clusters) > 0 || (rb.Spec.Suspension != nil && rb.Spec.Suspension.Scheduling != nil && *rb.Spec.Suspension.Scheduling) {
			continue
		}
		var allowed []string
		if p := rb.Spec.Placement; p != nil && p.ClusterAffinity != nil {
			allowed = p.ClusterAffinity.ClusterNames
		}
		best, bestFree := "", int64(-1)
		for _, c := range cls.Items {
			if len(allowed) > 0 && !slices.Contains(allowed, c.Name) {
				continue
			}
			if len(c.Status.Conditions) == 0 || c.Status.Conditions[0].Status != metav1.ConditionTrue || c.Status.ResourceSummary == nil {
				continue
			}
			rs := c.Status.ResourceSummary
			fits, cpuFree := true, int64(0)
			for name, want := range request(rb) {
				free := rs.Allocatable[name].DeepCopy()
				free.Sub(rs.Allocated[name])
				free.Sub(rs.Allocating[name])
				if free.Cmp(want) < 0 {
					fits = false
				}
				if name == corev1.ResourceCPU {
					cpuFree = free.MilliValue()
				}
			}
			if fits && cpuFree > bestFree {
				best, bestFree = c.Name, cpuFree
			}
		}
		if best == "" {
			continue
		}
		patched := rb.DeepCopy()
		patched.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: best, Replicas: 1}}
		if err := s.karmada.Patch(ctx, patched, client.MergeFrom(rb)); err != nil {
			return err
		}
	}
	return nil
}

// apply puts each placed binding's Job on its member and copies the
// member's status back.
func (s *standIn) apply(ctx context.Context) error {
	var rbs workv1alpha2.ResourceBindingList
	if err := s.karmada.List(ctx, &rbs); err != nil {
		return err
	}
	for i := range rbs.Items {
		rb := &rbs.Items[i]
		if len(rb.Spec.Clusters) == 0 {
			continue
		}
		mc := s.members[rb.Spec.Clusters[0].Name]
		if mc == nil {
			continue
		}
		var tmpl batchv1alpha1.Job
		if err := s.karmada.Get(ctx, client.ObjectKey{Namespace: rb.Spec.Resource.Namespace, Name: rb.Spec.Resource.Name}, &tmpl); err != nil {
			continue
		}
		var onMember batchv1alpha1.Job
		err := mc.Get(ctx, client.ObjectKeyFromObject(&tmpl), &onMember)
		if apierrors.IsNotFound(err) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tmpl.Namespace}}
			if err := mc.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			onMember = batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: tmpl.Namespace, Name: tmpl.Name, Labels: tmpl.Labels, Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
			if err := mc.Create(ctx, &onMember); err != nil {
				return err
			}
			continue
		} else if err != nil {
			return err
		}
		raw, err := json.Marshal(onMember.Status)
		if err != nil {
			return err
		}
		health := workv1alpha2.Healthy
		if onMember.Status.State.Phase == batchv1alpha1.JobFailed {
			health = workv1alpha2.Unhealthy
		}
		rb.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: rb.Spec.Clusters[0].Name, Status: &runtime.RawExtension{Raw: raw}, Applied: true, Health: health}}
		if err := s.karmada.Status().Update(ctx, rb); err != nil {
			return err
		}
		tmpl.Status = onMember.Status
		if err := s.karmada.Status().Update(ctx, &tmpl); err != nil {
			return err
		}
	}
	return nil
}

// cpus is a quantity of whole CPUs.
func cpus(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
