// Package sharding runs the sharding controller: it keeps each scheduler
// instance's NodeShard (shard.volcano.sh/v1alpha1) holding the nodes its
// policy gives it (spec.nodesDesired): by node labels, or by CPU
// utilisation (requests over allocatable) with hysteresis, within each
// shard's bounds. The instances settle among themselves when a node
// actually moves (pkg/scheduler/sharding).
//
// The decision is pure: core.Decide over the nodes, their utilisation and
// the current assignment.
package sharding

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	shardv1alpha1 "github.com/caldera-sh/caldera/apis/shard/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controllers/sharding/core"
	shardcore "github.com/caldera-sh/caldera/pkg/scheduler/sharding/core"
)

// ControllerName names the controller in logs, metrics and --controllers.
const ControllerName = "sharding"

// fieldOwner is the field manager of the controller's writes.
const fieldOwner = "caldera-sharding-controller"

// shardsKey is the one request: the nodes are divided among all shards at
// once.
var shardsKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "shards"}}

// Reconciler writes the NodeShards of the configured shards.
type Reconciler struct {
	client client.Client
	cfg    *Config
	clock  clock.PassiveClock

	mu sync.Mutex
	// renewals say which instances are gone: their status not seen
	// renewed for StaleAfter; their shards take no node.
	renewals shardcore.Renewals
}

var _ reconcile.Reconciler = &Reconciler{}

// NewReconciler returns a reconciler for the configured shards.
func NewReconciler(c client.Client, cfg *Config, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{client: c, cfg: cfg, clock: clk}
}

// dead reports, per configured shard with a NodeShard, whether its
// instance is gone: its status not seen renewed for StaleAfter (the time
// after which the other instances take its nodes).
func (r *Reconciler) dead(existing map[string]*shardv1alpha1.NodeShard) map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	out := map[string]bool{}
	for _, s := range r.cfg.Shards {
		if cur := existing[s.Name]; cur != nil {
			out[s.Name] = r.renewals.Observe(s.Name, cur.Status.Stamp(), now)
		}
	}
	r.renewals.Keep(func(name string) bool { return existing[name] != nil })
	return out
}

// Reconcile divides the nodes among the configured shards and writes each
// NodeShard's spec.nodesDesired where it differs. NodeShards of other
// names are left alone. Each write is of the whole list, so a crash
// between two is repaired by the next run.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	logger := ctrl.LoggerFrom(ctx)
	var nodes corev1.NodeList
	if err := r.client.List(ctx, &nodes); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing nodes: %w", err)
	}
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing pods: %w", err)
	}
	var shards shardv1alpha1.NodeShardList
	if err := r.client.List(ctx, &shards); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing NodeShards: %w", err)
	}
	existing := map[string]*shardv1alpha1.NodeShard{}
	for i := range shards.Items {
		existing[shards.Items[i].Name] = &shards.Items[i]
	}
	in := core.Input{Policies: r.cfg.policies(), Hysteresis: r.cfg.hysteresis(), Current: map[string]string{}}
	dead := r.dead(existing)
	for i := range in.Policies {
		if dead[in.Policies[i].Name] {
			in.Policies[i].Dead = true
			logger.V(2).Info("A scheduler instance is gone: its shard's nodes go to the others", "nodeShard", in.Policies[i].Name)
		}
	}
	for _, s := range r.cfg.Shards {
		if cur := existing[s.Name]; cur != nil {
			for _, n := range cur.Spec.NodesDesired {
				if _, taken := in.Current[n]; !taken {
					in.Current[n] = s.Name
				}
			}
		}
	}
	in.Nodes = nodesOf(nodes.Items, pods.Items)
	desired := core.Decide(in)

	for _, s := range r.cfg.Shards {
		want := desired[s.Name]
		cur := existing[s.Name]
		switch {
		case cur == nil:
			ns := &shardv1alpha1.NodeShard{ObjectMeta: metav1.ObjectMeta{Name: s.Name}, Spec: shardv1alpha1.NodeShardSpec{NodesDesired: nonNil(want)}}
			if err := r.client.Create(ctx, ns, client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
				return reconcile.Result{}, fmt.Errorf("creating NodeShard %s: %w", s.Name, err)
			}
			logger.Info("Created a NodeShard", "nodeShard", s.Name, "nodes", len(want))
		case !sameSet(cur.Spec.NodesDesired, want):
			upd := cur.DeepCopy()
			upd.Spec.NodesDesired = nonNil(want)
			if err := r.client.Update(ctx, upd, client.FieldOwner(fieldOwner)); err != nil {
				return reconcile.Result{}, fmt.Errorf("updating NodeShard %s: %w", s.Name, err)
			}
			logger.Info("Updated a NodeShard", "nodeShard", s.Name, "nodes", len(want), "was", len(cur.Spec.NodesDesired))
		}
	}
	return reconcile.Result{RequeueAfter: r.cfg.resyncPeriod()}, nil
}

// nodesOf reads each node's labels, whether it takes pods (not cordoned,
// Ready), and its CPU utilisation: the requests of the pods bound to it
// that have not finished, over its allocatable CPU.
func nodesOf(nodes []corev1.Node, pods []corev1.Pod) []core.Node {
	requested := map[string]int64{}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		requested[p.Spec.NodeName] += req.Cpu().MilliValue()
	}
	out := make([]core.Node, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		u := 0.0
		if alloc := n.Status.Allocatable.Cpu().MilliValue(); alloc > 0 {
			u = float64(requested[n.Name]) / float64(alloc)
		}
		out[i] = core.Node{Name: n.Name, Labels: n.Labels, Utilisation: u, Schedulable: !n.Spec.Unschedulable && ready(n)}
	}
	return out
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// nonNil keeps an empty list a list: nodesDesired is required.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// SetupWithManager registers the controller: a NodeShard's spec changing,
// and a node being added, removed, relabelled, cordoned or uncordoned,
// becoming ready or not, or changing its allocatable CPU, divide the nodes
// again; so does the resync period, as pods come and go and instances'
// statuses age.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{shardsKey}
	})
	nodeChanged := predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*corev1.Node)
			n, ok2 := e.ObjectNew.(*corev1.Node)
			if !ok1 || !ok2 {
				return true
			}
			return !equality.Semantic.DeepEqual(o.Labels, n.Labels) || o.Spec.Unschedulable != n.Spec.Unschedulable ||
				ready(o) != ready(n) || !o.Status.Allocatable.Cpu().Equal(*n.Status.Allocatable.Cpu())
		},
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&shardv1alpha1.NodeShard{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Node{}, all, builder.WithPredicates(nodeChanged)).
		Complete(r)
}
