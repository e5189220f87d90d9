package fedenv

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// StandIn does, for the tests only, the part of Karmada's controllers the
// federation needs, by Karmada's rules as its code and documentation
// give them. It is never shipped.
//
//   - Detector: a Volcano Job matched by a PropagationPolicy (the highest
//     priority; then one naming it over one selecting its kind; then by
//     name) gets a ResourceBinding named <job>-job, with the Job's replicas
//     from deploy/global's interpreter customization: replicaResource (one
//     replica of the whole Job, Karmada's default) or, like Karmada with
//     its MultiplePodTemplatesScheduling gate on, componentResource. Like
//     Karmada's detector, it writes the policy's placement back onto the
//     binding whenever it re-applies the policy, which it does every round
//     (Karmada does it whenever the template changes and for every binding
//     when karmada-controller-manager restarts): a binding's placement is
//     the policy's, whatever else wrote it. It never touches
//     spec.clusters or spec.suspension.scheduling.
//   - Scheduler: a binding whose scheduling is not suspended, unplaced or
//     whose placement differs from the one it was scheduled by (kept in
//     the annotation policy.karmada.io/applied-placement), goes to the
//     Ready cluster of its affinity with the most free CPU that holds it.
//   - Binding and execution controllers: a placed binding's Job is applied
//     to its member (and taken away from members it is no longer placed
//     in); a member that refuses it is reported on the binding's
//     aggregated status as not applied, with the member's message, and
//     tried again next round; the member's Job status is copied back.
//     A propagated Job (label karmada.io/managed) whose template is gone
//     is deleted from its member.
//     A member that does not answer holds up no other member.
//   - Cluster status: each member's Cluster carries the member's nodes'
//     and pods' resource summary and a Ready condition, False while
//     SetReady says so or once the member has not answered for
//     FailureThreshold (its last summary kept).
type StandIn struct {
	karmada client.Client
	members map[string]client.Client
	access  map[string]MemberAccess
	// components: bindings get components (componentResource), not one
	// replica of the whole Job (replicaResource).
	components bool
	script     string

	mu   sync.Mutex
	down map[string]bool
	// unreachableSince is when each member not answering stopped.
	unreachableSince map[string]time.Time
	// interpreted caches each Job's replicas by UID and generation: the
	// script is run once per change, not every round.
	interpreted map[string]workv1alpha2.ResourceBindingSpec
}

// appliedPlacementAnnotation is where Karmada's scheduler records the
// placement it scheduled a binding by.
const appliedPlacementAnnotation = "policy.karmada.io/applied-placement"

// managedLabel marks what Karmada propagated to a member.
const managedLabel = "karmada.io/managed"

// policyAnnotation records on a binding the policy that claimed its
// template (Karmada labels the template; the stand-in keeps it here).
const policyAnnotation = "standin.caldera.sh/policy"

// NewStandIn returns a stand-in for the Karmada API server karmada and
// its members; Run starts it.
func NewStandIn(karmada client.Client, members map[string]client.Client, access map[string]MemberAccess, components bool) (*StandIn, error) {
	raw, err := global.Manifests.ReadFile("karmada/job-interpreter.yaml")
	if err != nil {
		return nil, err
	}
	var ric configv1alpha1.ResourceInterpreterCustomization
	if err := yaml.UnmarshalStrict(raw, &ric); err != nil {
		return nil, err
	}
	script := ric.Spec.Customizations.ReplicaResource.LuaScript
	if components {
		script = ric.Spec.Customizations.ComponentResource.LuaScript
	}
	return &StandIn{karmada: karmada, members: members, access: access, components: components, script: script, down: map[string]bool{}, unreachableSince: map[string]time.Time{}, interpreted: map[string]workv1alpha2.ResourceBindingSpec{}}, nil
}

// Name names the stand-in in test logs.
func (s *StandIn) Name() string {
	if s.components {
		return "stand-in (componentResource)"
	}
	return "stand-in"
}

// SetReady reports a member Ready or NotReady.
func (s *StandIn) SetReady(_ context.Context, name string, ready bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down[name] = !ready
	return nil
}

// RestartControllers does what a restart of Karmada's controllers does
// to bindings: the detector re-applies every policy, which the stand-in
// does every round anyway.
func (s *StandIn) RestartControllers(ctx context.Context) error { return s.bindings(ctx) }

// Unapplied is always empty: the stand-in propagates Jobs only.
func (s *StandIn) Unapplied(context.Context) ([]string, error) { return nil, nil }

// onMember calls a member with memberTimeout.
func (s *StandIn) onMember(ctx context.Context, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, memberTimeout)
	defer cancel()
	return call(ctx)
}

func (s *StandIn) isDown(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down[name]
}

// Run does its rounds until ctx ends; errors of a round are retried the
// next.
func (s *StandIn) Run(ctx context.Context) {
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

// FailureThreshold is how long a member's API server may go unanswered
// before its Cluster is reported NotReady, as Karmada's cluster status
// controller does (its --cluster-failure-threshold default).
const FailureThreshold = 30 * time.Second

// memberTimeout bounds each call to a member: one that does not answer
// (its API server stopped) holds up no other member.
const memberTimeout = 3 * time.Second

// clusters writes each member's Cluster with its resource summary. A
// member that does not answer keeps its last summary, and is reported
// NotReady once it has not answered for FailureThreshold.
func (s *StandIn) clusters(ctx context.Context) error {
	for name, mc := range s.members {
		var nodes corev1.NodeList
		var pods corev1.PodList
		err := s.onMember(ctx, func(ctx context.Context) error { return mc.List(ctx, &nodes) })
		if err == nil {
			err = s.onMember(ctx, func(ctx context.Context) error { return mc.List(ctx, &pods) })
		}
		s.mu.Lock()
		if err == nil {
			delete(s.unreachableSince, name)
		} else if _, ok := s.unreachableSince[name]; !ok {
			s.unreachableSince[name] = time.Now()
		}
		lost := err != nil && time.Since(s.unreachableSince[name]) >= FailureThreshold
		s.mu.Unlock()
		if err != nil && !lost {
			continue
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
		err = s.karmada.Get(ctx, client.ObjectKey{Name: name}, cl)
		if apierrors.IsNotFound(err) {
			// As karmadactl join: the member's credentials in
			// karmada-cluster, named by the Cluster.
			a := s.access[name]
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: name},
				Data: map[string][]byte{inventory.SecretTokenKey: []byte(a.Token), inventory.SecretCABundleKey: a.CA}}
			if err := s.karmada.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			cl = &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push,
				APIEndpoint: a.Endpoint, SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: name}}}
			if err := s.karmada.Create(ctx, cl); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		ready, reason := metav1.ConditionTrue, "StandIn"
		if s.isDown(name) {
			ready = metav1.ConditionFalse
		}
		if lost {
			ready, reason = metav1.ConditionFalse, "ClusterNotReachable"
		}
		cond := metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: ready, Reason: reason, LastTransitionTime: metav1.Now()}
		if len(cl.Status.Conditions) == 1 && cl.Status.Conditions[0].Status == ready {
			cond.LastTransitionTime = cl.Status.Conditions[0].LastTransitionTime
		}
		status := clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{cond}, ResourceSummary: &sum,
			NodeSummary: &clusterv1alpha1.NodeSummary{TotalNum: int32(len(nodes.Items)), ReadyNum: int32(len(nodes.Items))}}
		if lost {
			// Karmada keeps the last summary it collected.
			status.ResourceSummary, status.NodeSummary = cl.Status.ResourceSummary, cl.Status.NodeSummary
		}
		if equality.Semantic.DeepEqual(cl.Status, status) {
			continue
		}
		cl.Status = status
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

// claim picks the policy that propagates the Job: the highest priority,
// then one that names it over one that selects its kind, then by name.
func claim(j *batchv1alpha1.Job, pps []policyv1alpha1.PropagationPolicy) *policyv1alpha1.PropagationPolicy {
	var best *policyv1alpha1.PropagationPolicy
	bestPriority, bestNamed := int32(0), false
	for k := range pps {
		pp := &pps[k]
		matched, named := false, false
		for _, sel := range pp.Spec.ResourceSelectors {
			if sel.APIVersion == batchv1alpha1.SchemeGroupVersion.String() && sel.Kind == "Job" && (sel.Name == "" || sel.Name == j.Name) {
				matched, named = true, named || sel.Name != ""
			}
		}
		if !matched {
			continue
		}
		priority := int32(0)
		if pp.Spec.Priority != nil {
			priority = *pp.Spec.Priority
		}
		if best == nil || priority > bestPriority || (priority == bestPriority && named && !bestNamed) ||
			(priority == bestPriority && named == bestNamed && pp.Name < best.Name) {
			best, bestPriority, bestNamed = pp, priority, named
		}
	}
	return best
}

// bindings creates the binding of each Job a policy matches, and re-applies
// the claiming policy to the bindings that exist: placement and replicas
// written back (when they differ), clusters and the scheduling suspension
// left alone.
func (s *StandIn) bindings(ctx context.Context) error {
	var jobs batchv1alpha1.JobList
	var pps policyv1alpha1.PropagationPolicyList
	var rbs workv1alpha2.ResourceBindingList
	for _, l := range []client.ObjectList{&jobs, &pps, &rbs} {
		if err := s.karmada.List(ctx, l); err != nil {
			return err
		}
	}
	policies := map[string][]policyv1alpha1.PropagationPolicy{}
	for _, pp := range pps.Items {
		policies[pp.Namespace] = append(policies[pp.Namespace], pp)
	}
	bindings := map[string]*workv1alpha2.ResourceBinding{}
	for i := range rbs.Items {
		bindings[rbs.Items[i].Namespace+"/"+rbs.Items[i].Name] = &rbs.Items[i]
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if rb := bindings[j.Namespace+"/"+j.Name+"-job"]; rb != nil {
			// The template keeps the policy that claimed it.
			var pp *policyv1alpha1.PropagationPolicy
			for k := range policies[j.Namespace] {
				if policies[j.Namespace][k].Name == rb.Annotations[policyAnnotation] {
					pp = &policies[j.Namespace][k]
				}
			}
			if pp == nil {
				continue
			}
			applied := rb.DeepCopy()
			if err := s.replicas(j, &applied.Spec); err != nil {
				return err
			}
			applied.Spec.Placement = pp.Spec.Placement.DeepCopy()
			if equality.Semantic.DeepEqual(applied.Spec, rb.Spec) {
				continue
			}
			if err := s.karmada.Patch(ctx, applied, client.MergeFrom(rb)); err != nil {
				return err
			}
			continue
		}
		pp := claim(j, policies[j.Namespace])
		if pp == nil {
			continue
		}
		rb := &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: j.Name + "-job", Annotations: map[string]string{policyAnnotation: pp.Name}},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource:  workv1alpha2.ObjectReference{APIVersion: batchv1alpha1.SchemeGroupVersion.String(), Kind: "Job", Namespace: j.Namespace, Name: j.Name, UID: string(j.UID)},
				Placement: pp.Spec.Placement.DeepCopy(),
			},
		}
		if err := s.replicas(j, &rb.Spec); err != nil {
			return err
		}
		if err := s.karmada.Create(ctx, rb); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// replicas runs the Job's interpreter script into the binding's spec.
func (s *StandIn) replicas(j *batchv1alpha1.Job, spec *workv1alpha2.ResourceBindingSpec) error {
	key := fmt.Sprintf("%s/%d", j.UID, j.Generation)
	s.mu.Lock()
	got, ok := s.interpreted[key]
	s.mu.Unlock()
	if !ok {
		if err := s.interpret(j, &got); err != nil {
			return err
		}
		s.mu.Lock()
		s.interpreted[key] = got
		s.mu.Unlock()
	}
	got = *got.DeepCopy()
	spec.Replicas, spec.ReplicaRequirements, spec.Components = got.Replicas, got.ReplicaRequirements, got.Components
	return nil
}

// interpret runs the script.
func (s *StandIn) interpret(j *batchv1alpha1.Job, spec *workv1alpha2.ResourceBindingSpec) error {
	obj, err := luatest.JSON(j)
	if err != nil {
		return err
	}
	if s.components {
		out, err := luatest.Call(s.script, "GetComponents", 1, obj)
		if err != nil {
			return err
		}
		spec.Components = nil
		return remarshal(out[0], &spec.Components)
	}
	out, err := luatest.Call(s.script, "GetReplicas", 2, obj)
	if err != nil {
		return err
	}
	if err := remarshal(out[0], &spec.Replicas); err != nil {
		return err
	}
	spec.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{}
	return remarshal(out[1], spec.ReplicaRequirements)
}

func remarshal(from, into any) error {
	raw, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, into)
}

// request is the whole binding's request: every component's replicas, or
// its replicas of one requirement.
func request(rb *workv1alpha2.ResourceBinding) corev1.ResourceList {
	out := corev1.ResourceList{}
	add := func(req corev1.ResourceList, n int32) {
		for name, q := range req {
			sum := out[name]
			for range n {
				sum.Add(q)
			}
			out[name] = sum
		}
	}
	for _, c := range rb.Spec.Components {
		if c.ReplicaRequirements != nil {
			add(c.ReplicaRequirements.ResourceRequest, c.Replicas)
		}
	}
	if rr := rb.Spec.ReplicaRequirements; rr != nil {
		add(rr.ResourceRequest, rb.Spec.Replicas)
	}
	return out
}

// place schedules each binding Karmada's scheduler would: not suspended,
// and unplaced or with a placement other than the one it was scheduled by.
func (s *StandIn) place(ctx context.Context) error {
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
		if rb.Spec.SchedulingSuspended() {
			continue
		}
		placement, err := json.Marshal(rb.Spec.Placement)
		if err != nil {
			return err
		}
		if len(rb.Spec.Clusters) > 0 && rb.Annotations[appliedPlacementAnnotation] == string(placement) {
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
		patched.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: best, Replicas: rb.Spec.Replicas}}
		if patched.Annotations == nil {
			patched.Annotations = map[string]string{}
		}
		patched.Annotations[appliedPlacementAnnotation] = string(placement)
		if err := s.karmada.Patch(ctx, patched, client.MergeFrom(rb)); err != nil {
			return err
		}
	}
	return nil
}

// apply puts each placed binding's Job on its member, takes it away from
// the members it is not placed in, and copies the member's status back;
// a member's refusal is reported on the binding.
func (s *StandIn) apply(ctx context.Context) error {
	var rbs workv1alpha2.ResourceBindingList
	var templates batchv1alpha1.JobList
	if err := s.karmada.List(ctx, &rbs); err != nil {
		return err
	}
	if err := s.karmada.List(ctx, &templates); err != nil {
		return err
	}
	tmpls := map[string]*batchv1alpha1.Job{}
	for i := range templates.Items {
		tmpls[templates.Items[i].Namespace+"/"+templates.Items[i].Name] = &templates.Items[i]
	}
	onMembers := map[string]map[string]*batchv1alpha1.Job{}
	for name, mc := range s.members {
		var jobs batchv1alpha1.JobList
		if err := s.onMember(ctx, func(ctx context.Context) error { return mc.List(ctx, &jobs) }); err != nil {
			// Not answering: its Jobs wait, the other members' do not.
			continue
		}
		onMembers[name] = map[string]*batchv1alpha1.Job{}
		for i := range jobs.Items {
			onMembers[name][jobs.Items[i].Namespace+"/"+jobs.Items[i].Name] = &jobs.Items[i]
		}
	}
	// A Job propagated to a member whose template is gone goes too, as
	// Karmada deletes its Work (at once, or when the member answers again).
	for name, jobs := range onMembers {
		for key, j := range jobs {
			if tmpls[key] != nil || j.Labels[managedLabel] != "true" || !j.DeletionTimestamp.IsZero() {
				continue
			}
			mc := s.members[name]
			_ = s.onMember(ctx, func(ctx context.Context) error {
				return client.IgnoreNotFound(mc.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)))
			})
		}
	}
	for i := range rbs.Items {
		rb := &rbs.Items[i]
		if len(rb.Spec.Clusters) == 0 {
			continue
		}
		key := rb.Spec.Resource.Namespace + "/" + rb.Spec.Resource.Name
		tmpl := tmpls[key]
		if tmpl == nil {
			continue
		}
		target := rb.Spec.Clusters[0].Name
		for name, mc := range s.members {
			if name == target || onMembers[name][key] == nil {
				continue
			}
			gone := onMembers[name][key]
			if err := s.onMember(ctx, func(ctx context.Context) error {
				return mc.Delete(ctx, gone, client.PropagationPolicy(metav1.DeletePropagationBackground))
			}); client.IgnoreNotFound(err) != nil {
				continue
			}
		}
		mc := s.members[target]
		jobs, reached := onMembers[target]
		if mc == nil || !reached {
			continue
		}
		onMember := jobs[key]
		if onMember == nil {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tmpl.Namespace}}
			if err := s.onMember(ctx, func(ctx context.Context) error { return mc.Create(ctx, ns) }); err != nil && !apierrors.IsAlreadyExists(err) {
				continue
			}
			labels := map[string]string{managedLabel: "true"}
			for k, v := range tmpl.Labels {
				labels[k] = v
			}
			created := &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: tmpl.Namespace, Name: tmpl.Name, Labels: labels, Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
			if err := s.onMember(ctx, func(ctx context.Context) error { return mc.Create(ctx, created) }); err != nil && !apierrors.IsAlreadyExists(err) {
				// As Karmada reports a Work that failed to apply.
				msg := fmt.Sprintf("Failed to apply all manifests (0/1): %s", strings.TrimSpace(err.Error()))
				if err := s.aggregate(ctx, rb, workv1alpha2.AggregatedStatusItem{ClusterName: target, AppliedMessage: msg, Health: workv1alpha2.Unknown}); err != nil {
					return err
				}
			}
			continue
		}
		raw, err := json.Marshal(onMember.Status)
		if err != nil {
			return err
		}
		health := workv1alpha2.Healthy
		if onMember.Status.State.Phase == batchv1alpha1.JobFailed {
			health = workv1alpha2.Unhealthy
		}
		if err := s.aggregate(ctx, rb, workv1alpha2.AggregatedStatusItem{ClusterName: target, Status: &runtime.RawExtension{Raw: raw}, Applied: true, Health: health}); err != nil {
			return err
		}
		if !equality.Semantic.DeepEqual(tmpl.Status, onMember.Status) {
			tmpl.Status = onMember.Status
			if err := s.karmada.Status().Update(ctx, tmpl); err != nil {
				return err
			}
		}
	}
	return nil
}

// aggregate writes the binding's aggregated status, when it changes.
func (s *StandIn) aggregate(ctx context.Context, rb *workv1alpha2.ResourceBinding, item workv1alpha2.AggregatedStatusItem) error {
	if len(rb.Status.AggregatedStatus) == 1 && sameItem(rb.Status.AggregatedStatus[0], item) {
		return nil
	}
	rb.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{item}
	return s.karmada.Status().Update(ctx, rb)
}

// sameItem compares aggregated status items, their statuses as JSON
// values (the API server may order their fields otherwise).
func sameItem(a, b workv1alpha2.AggregatedStatusItem) bool {
	decode := func(r *runtime.RawExtension) any {
		if r == nil {
			return nil
		}
		var v any
		_ = json.Unmarshal(r.Raw, &v)
		return v
	}
	sa, sb := decode(a.Status), decode(b.Status)
	a.Status, b.Status = nil, nil
	return a == b && equality.Semantic.DeepEqual(sa, sb)
}
