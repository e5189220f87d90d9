// Package descheduler runs the load-aware descheduler: every interval it
// reads the nodes' measured use (NodeUsage, published by caldera-agent),
// their pods and the disruption budgets, asks core.Decide which pods to
// move off the nodes that run hot, and evicts them through the Eviction
// API, which enforces the budgets too. The scheduler then places them
// again; with its usage plugin, not back onto a hot node.
package descheduler

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controllers/descheduler/core"
	"github.com/caldera-sh/caldera/pkg/loadaware"
)

// ControllerName names the controller in logs, metrics and --controllers.
const ControllerName = "descheduler"

// runKey is the one request: a run looks at every node.
var runKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "run"}}

// Reconciler runs the descheduler.
type Reconciler struct {
	client   client.Client
	recorder events.EventRecorder
	cfg      *Config
	clock    clock.PassiveClock

	mu sync.Mutex
	// last is when the last run began; zero before the first.
	last time.Time
}

var _ reconcile.Reconciler = &Reconciler{}

// NewReconciler returns the descheduler for the configuration.
func NewReconciler(c client.Client, recorder events.EventRecorder, cfg *Config, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{client: c, recorder: recorder, cfg: cfg, clock: clk}
}

// Reconcile runs once the interval since the last run has passed.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	every := r.cfg.Interval.Duration
	if !r.last.IsZero() && now.Sub(r.last) < every {
		return reconcile.Result{RequeueAfter: every - now.Sub(r.last)}, nil
	}
	r.last = now
	if err := r.run(ctx, now); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: every}, nil
}

// run decides once and evicts.
func (r *Reconciler) run(ctx context.Context, now time.Time) error {
	logger := klog.FromContext(ctx)
	in, pods, err := r.observe(ctx, now)
	if err != nil {
		return err
	}
	d := core.Decide(in)
	for _, v := range d.Nodes {
		if v.State == core.Hot {
			logger.Info("Hot node", "node", v.Node, "verdict", v.Message)
		} else {
			logger.V(3).Info("Node", "node", v.Node, "state", v.State, "verdict", v.Message)
		}
	}
	for _, e := range d.Evictions {
		pod := pods[e.Pod]
		if r.cfg.DryRun {
			logger.Info("Would evict (dry run)", "pod", e.Pod, "node", e.Node, "reason", e.Reason)
			continue
		}
		err := r.client.SubResource("eviction").Create(ctx, pod, &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}},
		})
		switch {
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			// Gone, or replaced by another pod of the same name, since it
			// was read: nothing to move.
		case apierrors.IsTooManyRequests(err):
			logger.Info("Eviction refused by a disruption budget", "pod", e.Pod, "err", err)
		case err != nil:
			logger.Error(err, "Evicting a pod failed", "pod", e.Pod)
		default:
			logger.Info("Evicted a pod off a hot node", "pod", e.Pod, "node", e.Node, "roomOn", e.To)
			r.recorder.Eventf(pod, nil, corev1.EventTypeNormal, "Descheduled", "Evict", "%s", e.Reason)
		}
	}
	return nil
}

// observe reads what a run decides on; pods are the candidates by key.
func (r *Reconciler) observe(ctx context.Context, now time.Time) (core.Input, map[string]*corev1.Pod, error) {
	var nodes corev1.NodeList
	if err := r.client.List(ctx, &nodes); err != nil {
		return core.Input{}, nil, fmt.Errorf("listing nodes: %w", err)
	}
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods); err != nil {
		return core.Input{}, nil, fmt.Errorf("listing pods: %w", err)
	}
	var usages metricsv1alpha1.NodeUsageList
	if err := r.client.List(ctx, &usages); err != nil {
		return core.Input{}, nil, fmt.Errorf("listing NodeUsages: %w", err)
	}
	var pdbs policyv1.PodDisruptionBudgetList
	if err := r.client.List(ctx, &pdbs); err != nil {
		return core.Input{}, nil, fmt.Errorf("listing PodDisruptionBudgets: %w", err)
	}
	var groups schedulingv1beta1.PodGroupList
	if err := r.client.List(ctx, &groups); err != nil {
		return core.Input{}, nil, fmt.Errorf("listing PodGroups: %w", err)
	}
	gangMin := map[types.NamespacedName]int32{}
	for _, pg := range groups.Items {
		gangMin[types.NamespacedName{Namespace: pg.Namespace, Name: pg.Name}] = pg.Spec.MinMember
	}
	usageOf := map[string]*metricsv1alpha1.NodeUsage{}
	for i := range usages.Items {
		usageOf[usages.Items[i].Name] = &usages.Items[i]
	}
	in := core.Input{Now: now, Config: r.cfg.Policy(), Allowed: map[string]int32{}}
	byNode := map[string]*core.Node{}
	for _, n := range nodes.Items {
		cn := &core.Node{Name: n.Name, Allocatable: core.AmountsOf(n.Status.Allocatable), Closed: closed(&n)}
		if nu := usageOf[n.Name]; nu != nil {
			if u, err := loadaware.FromNodeUsage(nu); err == nil {
				cn.Usage = u
			}
		}
		byNode[n.Name] = cn
	}
	type selector struct {
		key string
		ns  string
		sel labels.Selector
	}
	var budgets []selector
	for _, b := range pdbs.Items {
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || sel.Empty() {
			continue
		}
		key := b.Namespace + "/" + b.Name
		in.Allowed[key] = b.Status.DisruptionsAllowed
		budgets = append(budgets, selector{key: key, ns: b.Namespace, sel: sel})
	}
	candidates := map[string]*corev1.Pod{}
	present := map[types.UID]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		cn := byNode[p.Spec.NodeName]
		if cn == nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		present[p.UID] = true
		key := p.Namespace + "/" + p.Name
		req := core.AmountsOf(resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}))
		cn.Requested = cn.Requested.Plus(req)
		cp := core.Pod{Key: key, UID: string(p.UID), Request: req, Usage: req, Leaving: p.DeletionTimestamp != nil}
		if p.Spec.Priority != nil {
			cp.Priority = *p.Spec.Priority
		}
		if u := cn.Usage; u != nil && !u.Holds(p.Status.StartTime) {
			cp.Unmeasured = true
		}
		gang := gangMin[types.NamespacedName{Namespace: p.Namespace, Name: p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]}]
		cp.Unmovable = core.Unmovable(p, gang)
		if cp.Unmovable == "" && !r.cfg.movesFrom(p.Namespace) {
			cp.Unmovable = "namespace not moved"
		}
		for _, b := range budgets {
			if b.ns == p.Namespace && b.sel.Matches(labels.Set(p.Labels)) {
				cp.Budgets = append(cp.Budgets, b.key)
			}
		}
		cn.Pods = append(cn.Pods, cp)
		candidates[key] = p
	}
	// Each pod's measured use replaces its request; a measured pod that
	// is gone is still in the averages: its use is leaving the node.
	for name, cn := range byNode {
		nu := usageOf[name]
		if nu == nil || cn.Usage == nil {
			continue
		}
		measured := map[string]core.Amounts{}
		for _, pu := range nu.Pods {
			a := core.AmountsOf(pu.Usage)
			if !present[pu.UID] {
				cn.Pods = append(cn.Pods, core.Pod{Key: pu.Namespace + "/" + pu.Name, UID: string(pu.UID), Usage: a, Leaving: true, Unmovable: "gone"})
				continue
			}
			measured[string(pu.UID)] = a
		}
		for i := range cn.Pods {
			if a, ok := measured[cn.Pods[i].UID]; ok && !cn.Pods[i].Unmeasured {
				cn.Pods[i].Usage = a
			}
		}
	}
	for _, n := range nodes.Items {
		in.Nodes = append(in.Nodes, *byNode[n.Name])
	}
	return in, candidates, nil
}

// closed reports whether a node takes no new pods: cordoned, or not
// ready.
func closed(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return true
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return true
}

// SetupWithManager runs the descheduler on the manager: a run is due at
// start and every interval; NodeUsage events wake it (runs stay an
// interval apart).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&metricsv1alpha1.NodeUsage{}, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return []reconcile.Request{runKey}
		})).
		Complete(r)
}
