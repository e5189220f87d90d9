// Package queue runs the Queue controller: it keeps the root and default
// queues in existence, keeps each queue's status.state (Open, Closing,
// Closed) and the volcano.sh/closed-by-parent mark of the queue hierarchy,
// and executes the bus.volcano.sh Commands addressed to queues (OpenQueue,
// CloseQueue). The rest of a queue's status (allocated resources, PodGroup
// counts per phase) is the scheduler's and is never written here.
//
// The decisions are made by Next in state.go, a pure function.
package queue

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "queue"

// Field indexes the controller lists by.
const (
	// PodGroupQueueIndex indexes PodGroups by the queue they draw from.
	PodGroupQueueIndex = "queue.caldera.sh/podgroup-queue"
	// ParentIndex indexes Queues by their parent ("root" when unset).
	ParentIndex = "queue.caldera.sh/parent"
	// CommandTargetIndex indexes the Commands addressed to a Queue by its name.
	CommandTargetIndex = "queue.caldera.sh/command-target"
)

// executeCommand is the action of the events about Commands.
const executeCommand = "ExecuteCommand"

// DefaultCommandWait is how long an OpenQueue command waits for a closed
// parent to be opened before it is dropped.
const DefaultCommandWait = 2 * time.Minute

// Reconciler reconciles one queue per request.
//
// A reconcile reads the queue, its parent, its PodGroups and the Commands
// addressed to it, decides the state with Next, then writes in an order that
// survives a crash between any two writes:
//  1. the closed-by-parent mark, when it is being set (before the queue is
//     closed for its parent, so that a closed queue never lacks the mark
//     that reopens it);
//  2. status.state, with an optimistic lock, so that a decision made from a
//     stale cache is rejected rather than undoing a newer one;
//  3. the mark, when it is being cleared (after the queue is open);
//  4. the executed Commands are deleted, last: until then a crash means the
//     Command is executed again, to the same effect.
type Reconciler struct {
	client      client.Client
	recorder    events.EventRecorder
	clock       clock.PassiveClock
	commandWait time.Duration
}

var _ reconcile.Reconciler = &Reconciler{}

// NewReconciler returns a reconciler. OpenQueue commands that cannot be
// executed yet wait up to commandWait (DefaultCommandWait when 0).
func NewReconciler(c client.Client, recorder events.EventRecorder, clk clock.PassiveClock, commandWait time.Duration) *Reconciler {
	if commandWait == 0 {
		commandWait = DefaultCommandWait
	}
	return &Reconciler{client: c, recorder: recorder, clock: clk, commandWait: commandWait}
}

// +kubebuilder:rbac:groups=scheduling.volcano.sh,resources=queues,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=scheduling.volcano.sh,resources=queues/status,verbs=get;patch
// +kubebuilder:rbac:groups=scheduling.volcano.sh,resources=podgroups,verbs=get;list;watch
// +kubebuilder:rbac:groups=bus.volcano.sh,resources=commands,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one queue's state, and the Commands addressed to it, to
// what Next decides.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	logger := ctrl.LoggerFrom(ctx).WithValues("queue", req.Name)
	ctx = ctrl.LoggerInto(ctx, logger)

	q := &schedulingv1beta1.Queue{}
	if err := r.client.Get(ctx, req.NamespacedName, q); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("getting queue %s: %w", req.Name, err)
		}
		if err := r.ensureWellKnown(ctx, req.Name); err != nil {
			return reconcile.Result{}, err
		}
		return r.dropOrphanCommands(ctx, req.Name)
	}

	obs, err := r.observe(ctx, q)
	if err != nil {
		return reconcile.Result{}, err
	}
	cmds, err := r.commands(ctx, q.Name)
	if err != nil {
		return reconcile.Result{}, err
	}

	// Execute the commands oldest first, on the state as each leaves it.
	type outcome struct {
		cmd     *busv1alpha1.Command
		refusal *Refusal
	}
	var executed []outcome
	var wait time.Duration
	now := r.clock.Now()
	for _, cmd := range cmds {
		d, refusal := Next(obs, Action(cmd.Action))
		if refusal != nil && refusal.Wait {
			if left := cmd.CreationTimestamp.Add(r.commandWait).Sub(now); left > 0 {
				// Later commands wait behind this one, to keep their order.
				wait = left
				break
			}
			refusal.Message += fmt.Sprintf(" (waited %s)", r.commandWait)
		}
		obs.State, obs.ClosedByParent = d.State, d.ClosedByParent
		executed = append(executed, outcome{cmd: cmd, refusal: refusal})
	}
	d, _ := Next(obs, Sync)

	marked := q.Annotations[schedulingv1beta1.ClosedByParentAnnotation] == "true"
	if d.ClosedByParent && !marked {
		if err := r.setMark(ctx, q, "true"); err != nil {
			return reconcile.Result{}, err
		}
	}
	if d.State != q.Status.State {
		from := q.Status.State
		patch := client.MergeFromWithOptions(q.DeepCopy(), client.MergeFromWithOptimisticLock{})
		q.Status.State = d.State
		if err := r.client.Status().Patch(ctx, q, patch); err != nil {
			return reconcile.Result{}, fmt.Errorf("setting the state of queue %s to %s: %w", q.Name, d.State, err)
		}
		logger.V(2).Info("Queue state changed", "from", from, "to", d.State, "activePodGroups", obs.Active)
	}
	if !d.ClosedByParent && marked {
		if err := r.setMark(ctx, q, "false"); err != nil {
			return reconcile.Result{}, err
		}
	}

	for _, o := range executed {
		if o.refusal != nil {
			r.recorder.Eventf(q, o.cmd, corev1.EventTypeWarning, o.refusal.Reason, executeCommand,
				"Command %s/%s not executed: %s", o.cmd.Namespace, o.cmd.Name, o.refusal.Message)
		} else {
			r.recorder.Eventf(q, o.cmd, corev1.EventTypeNormal, o.cmd.Action, executeCommand,
				"Command %s/%s executed; the queue is %s", o.cmd.Namespace, o.cmd.Name, d.State)
		}
		err := r.client.Delete(ctx, o.cmd, client.Preconditions{UID: &o.cmd.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("deleting command %s: %w", klog.KObj(o.cmd), err)
		}
	}
	return reconcile.Result{RequeueAfter: wait}, nil
}

// ensureWellKnown creates the root or default queue when it is missing; any
// other missing queue is simply gone.
func (r *Reconciler) ensureWellKnown(ctx context.Context, name string) error {
	if name != schedulingv1beta1.RootQueue && name != schedulingv1beta1.DefaultQueue {
		return nil
	}
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}
	schedulingv1beta1.SetDefaults_Queue(q)
	if err := r.client.Create(ctx, q); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("creating queue %s: %w", name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Created queue")
	return nil
}

// dropOrphanCommands deletes, with a warning, the Commands addressed to a
// queue that does not exist, once they have waited as long as a command may
// (the queue may be created just after its command, or be missing from the
// cache for a moment).
func (r *Reconciler) dropOrphanCommands(ctx context.Context, queue string) (reconcile.Result, error) {
	cmds, err := r.commands(ctx, queue)
	if err != nil {
		return reconcile.Result{}, err
	}
	var wait time.Duration
	now := r.clock.Now()
	for _, cmd := range cmds {
		if left := cmd.CreationTimestamp.Add(r.commandWait).Sub(now); left > 0 {
			if wait == 0 || left < wait {
				wait = left
			}
			continue
		}
		r.recorder.Eventf(cmd, nil, corev1.EventTypeWarning, "QueueNotFound", executeCommand,
			"Command not executed: queue %s does not exist (waited %s)", queue, r.commandWait)
		err := r.client.Delete(ctx, cmd, client.Preconditions{UID: &cmd.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("deleting command %s: %w", klog.KObj(cmd), err)
		}
	}
	return reconcile.Result{RequeueAfter: wait}, nil
}

func (r *Reconciler) observe(ctx context.Context, q *schedulingv1beta1.Queue) (Observed, error) {
	obs := Observed{
		Root:           q.Name == schedulingv1beta1.RootQueue,
		State:          q.Status.State,
		ClosedByParent: q.Annotations[schedulingv1beta1.ClosedByParentAnnotation] == "true",
	}
	if parent := parentOf(q); parent != "" {
		p := &schedulingv1beta1.Queue{}
		err := r.client.Get(ctx, client.ObjectKey{Name: parent}, p)
		switch {
		case err == nil:
			obs.ParentClosed = p.Status.State == schedulingv1beta1.QueueStateClosed || p.Status.State == schedulingv1beta1.QueueStateClosing
		case !apierrors.IsNotFound(err):
			return obs, fmt.Errorf("getting parent %s of queue %s: %w", parent, q.Name, err)
		}
	}
	var pgs schedulingv1beta1.PodGroupList
	if err := r.client.List(ctx, &pgs, client.MatchingFields{PodGroupQueueIndex: q.Name}); err != nil {
		return obs, fmt.Errorf("listing the PodGroups of queue %s: %w", q.Name, err)
	}
	for i := range pgs.Items {
		if Active(pgs.Items[i].Status.Phase) {
			obs.Active++
		}
	}
	obs.ScheduledActive = scheduledActive(q)
	return obs, nil
}

// commands returns the Commands addressed to the queue, oldest first.
func (r *Reconciler) commands(ctx context.Context, queue string) ([]*busv1alpha1.Command, error) {
	var list busv1alpha1.CommandList
	if err := r.client.List(ctx, &list, client.MatchingFields{CommandTargetIndex: queue}); err != nil {
		return nil, fmt.Errorf("listing the commands of queue %s: %w", queue, err)
	}
	out := make([]*busv1alpha1.Command, 0, len(list.Items))
	for i := range list.Items {
		if c := &list.Items[i]; c.DeletionTimestamp == nil && IsQueueTarget(c.TargetObject) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *busv1alpha1.Command) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// setMark sets the closed-by-parent annotation; Volcano writes "false"
// rather than removing it.
func (r *Reconciler) setMark(ctx context.Context, q *schedulingv1beta1.Queue, value string) error {
	patch := client.MergeFromWithOptions(q.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if q.Annotations == nil {
		q.Annotations = map[string]string{}
	}
	q.Annotations[schedulingv1beta1.ClosedByParentAnnotation] = value
	if err := r.client.Patch(ctx, q, patch); err != nil {
		return fmt.Errorf("marking queue %s %s=%s: %w", q.Name, schedulingv1beta1.ClosedByParentAnnotation, value, err)
	}
	return nil
}

// parentOf is the queue's parent: spec.parent, "root" when unset, "" for root.
func parentOf(q *schedulingv1beta1.Queue) string {
	switch {
	case q.Name == schedulingv1beta1.RootQueue:
		return ""
	case q.Spec.Parent == "":
		return schedulingv1beta1.RootQueue
	}
	return q.Spec.Parent
}

// queueOf is the queue a PodGroup draws from, as the scheduler reads it.
func queueOf(pg *schedulingv1beta1.PodGroup) string {
	if pg.Spec.Queue == "" {
		return schedulingv1beta1.DefaultQueue
	}
	return pg.Spec.Queue
}

// IsQueueTarget reports whether a Command's target is a Queue. Volcano's
// vcctl has addressed queues as scheduling.volcano.sh v1alpha1 and v1beta1;
// both are accepted.
func IsQueueTarget(ref *metav1.OwnerReference) bool {
	if ref == nil || ref.Kind != "Queue" || ref.Name == "" {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == schedulingv1beta1.GroupName
}

// SetupWithManager registers the indexes and the controller. A queue is
// reconciled when it, its parent, one of its PodGroups or a Command
// addressed to it changes, and once at start for root and default.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	// IndexField uses its context only to look the informer up, which does
	// not block before the manager starts.
	ctx := context.Background()
	indexer := mgr.GetFieldIndexer()
	if err := indexer.IndexField(ctx, &schedulingv1beta1.PodGroup{}, PodGroupQueueIndex, indexPodGroupQueue); err != nil {
		return fmt.Errorf("indexing PodGroups by queue: %w", err)
	}
	if err := indexer.IndexField(ctx, &schedulingv1beta1.Queue{}, ParentIndex, indexParent); err != nil {
		return fmt.Errorf("indexing queues by parent: %w", err)
	}
	if err := indexer.IndexField(ctx, &busv1alpha1.Command{}, CommandTargetIndex, indexCommandTarget); err != nil {
		return fmt.Errorf("indexing commands by target queue: %w", err)
	}

	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&schedulingv1beta1.Queue{}, builder.WithPredicates(queueChanged)).
		Watches(&schedulingv1beta1.Queue{}, handler.EnqueueRequestsFromMapFunc(r.children), builder.WithPredicates(stateChanged)).
		Watches(&schedulingv1beta1.PodGroup{}, handler.EnqueueRequestsFromMapFunc(queueOfPodGroup), builder.WithPredicates(activityChanged)).
		Watches(&busv1alpha1.Command{}, handler.EnqueueRequestsFromMapFunc(targetOfCommand)).
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: schedulingv1beta1.RootQueue}})
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: schedulingv1beta1.DefaultQueue}})
			return nil
		})).
		Complete(r)
}

func indexPodGroupQueue(obj client.Object) []string {
	return []string{queueOf(obj.(*schedulingv1beta1.PodGroup))}
}

func indexParent(obj client.Object) []string {
	if p := parentOf(obj.(*schedulingv1beta1.Queue)); p != "" {
		return []string{p}
	}
	return nil
}

func indexCommandTarget(obj client.Object) []string {
	if t := obj.(*busv1alpha1.Command).TargetObject; IsQueueTarget(t) {
		return []string{t.Name}
	}
	return nil
}

// children maps a queue to its child queues.
func (r *Reconciler) children(ctx context.Context, obj client.Object) []reconcile.Request {
	var list schedulingv1beta1.QueueList
	if err := r.client.List(ctx, &list, client.MatchingFields{ParentIndex: obj.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing child queues failed", "queue", obj.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, q := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: q.Name}})
	}
	return out
}

func queueOfPodGroup(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: queueOf(obj.(*schedulingv1beta1.PodGroup))}}}
}

func targetOfCommand(_ context.Context, obj client.Object) []reconcile.Request {
	if t := obj.(*busv1alpha1.Command).TargetObject; IsQueueTarget(t) {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: t.Name}}}
	}
	return nil
}

// queueChanged passes the queue updates the controller decides from (not
// the scheduler's frequent allocation and count updates, only its counts
// of active PodGroups reaching or leaving zero).
var queueChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*schedulingv1beta1.Queue)
		n, ok2 := e.ObjectNew.(*schedulingv1beta1.Queue)
		if !ok1 || !ok2 {
			return true
		}
		return o.Generation != n.Generation || o.Status.State != n.Status.State ||
			o.Annotations[schedulingv1beta1.ClosedByParentAnnotation] != n.Annotations[schedulingv1beta1.ClosedByParentAnnotation] ||
			(scheduledActive(o) > 0) != (scheduledActive(n) > 0)
	},
}

// scheduledActive is the number of active PodGroups the scheduler counts in
// the queue's status.
func scheduledActive(q *schedulingv1beta1.Queue) int {
	return int(q.Status.Inqueue) + int(q.Status.Running) + int(q.Status.Unknown)
}

// stateChanged passes the queue events its children's state depends on.
var stateChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*schedulingv1beta1.Queue)
		n, ok2 := e.ObjectNew.(*schedulingv1beta1.Queue)
		return !ok1 || !ok2 || o.Status.State != n.Status.State
	},
}

// activityChanged passes the PodGroup events that can change how many
// active PodGroups a queue has. Updates are mapped from the old and the new
// object, so a group moving between queues updates both.
var activityChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*schedulingv1beta1.PodGroup)
		n, ok2 := e.ObjectNew.(*schedulingv1beta1.PodGroup)
		return !ok1 || !ok2 || Active(o.Status.Phase) != Active(n.Status.Phase) || queueOf(o) != queueOf(n)
	},
}
