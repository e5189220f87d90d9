// Package hypernode runs the HyperNode controller. It discovers HyperNodes
// from node labels, as Volcano's label discovery source does (the
// networkTopologyDiscovery configuration), creating, updating and deleting
// the HyperNodes it manages as nodes are added, relabelled and removed;
// and it keeps every HyperNode's status: the number of nodes below it and
// a Valid condition saying which of the topology tree's rules it breaks.
//
// The decisions are pure: Discover (discover.go) and DesiredStatus
// (status.go) over the tree pkg/topology builds.
package hypernode

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/topology"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "hypernode"

// fieldOwner is the field manager of the controller's writes.
const fieldOwner = "caldera-hypernode-controller"

// treeKey is the one request: the whole tree is reconciled at once, since
// one node's labels can change HyperNodes all the way up.
var treeKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "topology"}}

// Reconciler reconciles the HyperNode tree.
type Reconciler struct {
	client client.Client
	cfg    *Config
	clock  clock.PassiveClock
}

var _ reconcile.Reconciler = &Reconciler{}

// NewReconciler returns a reconciler; a nil cfg turns discovery off, and
// the controller only keeps statuses.
func NewReconciler(c client.Client, cfg *Config, clk clock.PassiveClock) *Reconciler {
	if cfg == nil {
		cfg = &Config{}
	}
	return &Reconciler{client: c, cfg: cfg, clock: clk}
}

// +kubebuilder:rbac:groups=topology.volcano.sh,resources=hypernodes,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=topology.volcano.sh,resources=hypernodes/status,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// Reconcile brings the discovered HyperNodes to what the nodes' labels say
// and every HyperNode's status to what the tree says. Each step is
// idempotent, so a crash between writes is repaired by the next run.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	logger := ctrl.LoggerFrom(ctx)
	var nodeList corev1.NodeList
	if err := r.client.List(ctx, &nodeList); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodes: %w", err)
	}
	var hnList topologyv1alpha1.HyperNodeList
	if err := r.client.List(ctx, &hnList); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing HyperNodes: %w", err)
	}
	nodes := make([]*corev1.Node, len(nodeList.Items))
	for i := range nodeList.Items {
		nodes[i] = &nodeList.Items[i]
	}
	existing := map[string]*topologyv1alpha1.HyperNode{}
	for i := range hnList.Items {
		existing[hnList.Items[i].Name] = &hnList.Items[i]
	}

	desired := Discover(r.cfg, nodes)
	wanted := map[string]bool{}
	for _, want := range desired {
		wanted[want.Name] = true
		cur := existing[want.Name]
		switch {
		case cur == nil:
			if err := r.client.Create(ctx, want, client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
				return reconcile.Result{}, fmt.Errorf("creating HyperNode %s: %w", want.Name, err)
			}
			logger.Info("Discovered a HyperNode", "hyperNode", klog.KObj(want), "tier", want.Spec.Tier, "members", len(want.Spec.Members))
			existing[want.Name] = want
		case !managed(cur):
			// A HyperNode of the user's with the same name: it stays as it
			// is, and the tree resolves both views.
			logger.Info("A HyperNode discovery would manage exists and is not discovery's; leaving it", "hyperNode", klog.KObj(cur))
		case !equality.Semantic.DeepEqual(cur.Spec, want.Spec) || !labelsHold(cur, want):
			upd := cur.DeepCopy()
			upd.Spec = want.Spec
			if upd.Labels == nil {
				upd.Labels = map[string]string{}
			}
			for k, v := range want.Labels {
				upd.Labels[k] = v
			}
			if err := r.client.Update(ctx, upd, client.FieldOwner(fieldOwner)); err != nil {
				return reconcile.Result{}, fmt.Errorf("updating HyperNode %s: %w", want.Name, err)
			}
			logger.Info("Updated a discovered HyperNode", "hyperNode", klog.KObj(upd), "members", len(upd.Spec.Members))
			existing[want.Name] = upd
		}
	}
	for name, cur := range existing {
		if managed(cur) && !wanted[name] {
			if err := r.client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
				return reconcile.Result{}, fmt.Errorf("deleting HyperNode %s: %w", name, err)
			}
			logger.Info("Deleted a HyperNode no node belongs to any more", "hyperNode", klog.KObj(cur))
			delete(existing, name)
		}
	}

	if err := r.writeStatuses(ctx, existing, nodes); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: r.cfg.Interval()}, nil
}

// writeStatuses patches the status of every HyperNode whose node count or
// Valid condition is not what the tree says.
func (r *Reconciler) writeStatuses(ctx context.Context, hns map[string]*topologyv1alpha1.HyperNode, nodes []*corev1.Node) error {
	list := make([]*topologyv1alpha1.HyperNode, 0, len(hns))
	for _, hn := range hns {
		list = append(list, hn)
	}
	slices.SortFunc(list, func(a, b *topologyv1alpha1.HyperNode) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	tree := topology.Build(list, nodes)
	problems := problemsByHyperNode(tree)
	now := metav1.NewTime(r.clock.Now())
	for _, hn := range list {
		desired := DesiredStatus(hn, tree, problems[hn.Name], now)
		if statusHolds(hn.Status, desired) {
			continue
		}
		patch := client.MergeFrom(hn.DeepCopy())
		hn.Status = desired
		if err := r.client.Status().Patch(ctx, hn, patch, client.FieldOwner(fieldOwner)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("writing the status of HyperNode %s: %w", hn.Name, err)
		}
	}
	return nil
}

// statusHolds reports whether cur already shows desired (transition times
// aside).
func statusHolds(cur, desired topologyv1alpha1.HyperNodeStatus) bool {
	if cur.NodeCount != desired.NodeCount || cur.ObservedGeneration != desired.ObservedGeneration || len(cur.Conditions) != len(desired.Conditions) {
		return false
	}
	for i := range cur.Conditions {
		c, d := cur.Conditions[i], desired.Conditions[i]
		if c.Type != d.Type || c.Status != d.Status || c.Reason != d.Reason || c.Message != d.Message || c.ObservedGeneration != d.ObservedGeneration {
			return false
		}
	}
	return true
}

func managed(hn *topologyv1alpha1.HyperNode) bool {
	return hn.Labels[DiscoveredByLabel] == LabelSource
}

func labelsHold(cur, want *topologyv1alpha1.HyperNode) bool {
	for k, v := range want.Labels {
		if cur.Labels[k] != v {
			return false
		}
	}
	return true
}

// SetupWithManager registers the controller: any HyperNode change, and a
// node being added, removed or relabelled, reconcile the tree (the
// informers' initial lists start the first run).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{treeKey}
	})
	nodeChanged := predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !equality.Semantic.DeepEqual(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
		},
	}
	hyperNodeChanged := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&topologyv1alpha1.HyperNode{}, all, builder.WithPredicates(hyperNodeChanged)).
		Watches(&corev1.Node{}, all, builder.WithPredicates(nodeChanged)).
		Complete(r)
}
