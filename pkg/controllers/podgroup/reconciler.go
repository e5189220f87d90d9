package podgroup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "podgroup"

// GroupIndex indexes the pods of our schedulers by GroupName.
const GroupIndex = "podgroup.caldera.sh/group"

// ErrOwnerNotFound: a pod's controlling workload is not (yet) in the cache.
var ErrOwnerNotFound = errors.New("controller of the pod not found")

// Reconciler creates the PodGroup of a group of pods and puts the pods in
// it. A request names a group: the namespace and the GroupName its pods
// share.
//
// Every step is idempotent and comes before the steps that depend on it, so
// that a crash anywhere leaves a state the next reconcile completes:
//  1. the PodGroup is created (create-or-get under its deterministic name);
//  2. only then is each pod annotated with it, with an optimistic lock, so a
//     pod never points at a group that was never created, and a pod that
//     someone else put in a group meanwhile is left alone.
type Reconciler struct {
	client         client.Client
	recorder       events.EventRecorder
	schedulerNames sets.Set[string]
}

var _ reconcile.Reconciler = &Reconciler{}

// NewReconciler returns a reconciler for the pods of the given schedulers.
func NewReconciler(c client.Client, recorder events.EventRecorder, schedulerNames []string) *Reconciler {
	return &Reconciler{client: c, recorder: recorder, schedulerNames: sets.New(schedulerNames...)}
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=replicasets;statefulsets;daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.volcano.sh,resources=podgroups,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one group to its desired state: a PodGroup exists while
// the group has live pods, and every live pod names it.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	logger := ctrl.LoggerFrom(ctx).WithValues("podGroup", req.NamespacedName)
	ctx = ctrl.LoggerInto(ctx, logger)

	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(req.Namespace), client.MatchingFields{GroupIndex: req.Name}); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing the pods of %s: %w", req.NamespacedName, err)
	}
	members := r.members(pods.Items, req.Name)

	pg := &schedulingv1beta1.PodGroup{}
	err := r.client.Get(ctx, req.NamespacedName, pg)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("getting PodGroup %s: %w", req.NamespacedName, err)
	}
	exists := err == nil

	if len(members) == 0 {
		if exists {
			return reconcile.Result{}, r.deleteIfScaledToZero(ctx, pg)
		}
		return reconcile.Result{}, nil
	}

	// A PodGroup someone else made under the name is used as it is; one
	// this controller made follows the workload.
	if !exists || (IsManaged(pg) && pg.DeletionTimestamp == nil) {
		var current *schedulingv1beta1.PodGroup
		if exists {
			current = pg
		}
		if err := r.ensurePodGroup(ctx, req.NamespacedName, members, current); err != nil {
			return reconcile.Result{}, err
		}
	}

	for _, pod := range members {
		if pod.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] == req.Name {
			continue
		}
		patch := client.MergeFromWithOptions(pod.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] = req.Name
		if err := r.client.Patch(ctx, pod, patch); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return reconcile.Result{}, fmt.Errorf("annotating pod %s with its PodGroup: %w", klog.KObj(pod), err)
		}
	}
	return reconcile.Result{}, nil
}

// ensurePodGroup creates the group's PodGroup, or brings the one this
// controller made (current) up to date with the group's pods and workload.
func (r *Reconciler) ensurePodGroup(ctx context.Context, key types.NamespacedName, members []*corev1.Pod, current *schedulingv1beta1.PodGroup) error {
	logger := ctrl.LoggerFrom(ctx)
	// The newest pod reflects the workload's current template.
	rep := slices.MaxFunc(members, func(a, b *corev1.Pod) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	w, owner, err := r.workloadOf(ctx, rep)
	if err != nil {
		return err
	}
	var nsAnnotations map[string]string
	if current == nil {
		ns := &corev1.Namespace{}
		if err := r.client.Get(ctx, client.ObjectKey{Name: key.Namespace}, ns); err != nil {
			return fmt.Errorf("getting namespace %s: %w", key.Namespace, err)
		}
		nsAnnotations = ns.Annotations
	}
	desired, err := Desired(rep, w, nsAnnotations)
	if err != nil {
		// Only an edit of the workload can fix this; that edit triggers a
		// new reconcile.
		r.recorder.Eventf(rep, owner, corev1.EventTypeWarning, "InvalidGroupMinMember", "CreatePodGroup", "%s", err.Error())
		return reconcile.TerminalError(fmt.Errorf("building PodGroup %s: %w", key, err))
	}

	if sts, ok := owner.(*appsv1.StatefulSet); ok && desired.Spec.MinMember > 1 && OrdersPods(sts) {
		// Not an error of the PodGroup: the gang waits, and says why.
		r.recorder.Eventf(sts, rep, corev1.EventTypeWarning, "GangCannotForm", "CreatePodGroup",
			"StatefulSet %s creates its pods one at a time (podManagementPolicy OrderedReady), so its gang of %d (%s) never has its pods at once: set podManagementPolicy: Parallel",
			sts.Name, desired.Spec.MinMember, schedulingv1beta1.GroupMinMemberAnnotation)
	}
	if current == nil {
		if err := r.client.Create(ctx, desired); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// Created by someone else, or by this controller and not
				// yet in the cache: used as it is.
				return nil
			}
			return fmt.Errorf("creating PodGroup %s: %w", key, err)
		}
		logger.V(2).Info("Created PodGroup", "pod", klog.KObj(rep), "minMember", desired.Spec.MinMember, "queue", desired.Spec.Queue)
		return nil
	}
	spec, changed := SpecUpdate(current, desired)
	if !changed {
		return nil
	}
	patch := client.MergeFromWithOptions(current.DeepCopy(), client.MergeFromWithOptimisticLock{})
	current.Spec = spec
	if err := r.client.Patch(ctx, current, patch); err != nil {
		return fmt.Errorf("updating PodGroup %s: %w", key, err)
	}
	logger.V(2).Info("Updated PodGroup", "minMember", spec.MinMember)
	return nil
}

// members are the live pods of the group: not being deleted, not finished,
// and naming either no PodGroup or this one.
func (r *Reconciler) members(pods []corev1.Pod, group string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if !r.ours(p) || p.DeletionTimestamp != nil || finished(p) {
			continue
		}
		if name := p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]; name != "" && name != group {
			continue
		}
		out = append(out, p)
	}
	return out
}

func (r *Reconciler) ours(pod *corev1.Pod) bool {
	return r.schedulerNames.Has(pod.Spec.SchedulerName)
}

func finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// workloadOf returns the annotations and labels of pod's controlling
// workload, and the workload, when it is of a kind the controller reads.
func (r *Reconciler) workloadOf(ctx context.Context, pod *corev1.Pod) (Workload, client.Object, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || newWorkload(ref) == nil {
		return Workload{}, nil, nil
	}
	obj, err := r.getWorkload(ctx, pod.Namespace, ref)
	if err != nil {
		return Workload{}, nil, err
	}
	if obj == nil {
		return Workload{}, nil, fmt.Errorf("%w: %s %s/%s of pod %s", ErrOwnerNotFound, ref.Kind, pod.Namespace, ref.Name, klog.KObj(pod))
	}
	return Workload{Annotations: obj.GetAnnotations(), Labels: obj.GetLabels()}, obj, nil
}

// getWorkload gets the workload ref points to; nil when it does not exist
// (or is another object of the same name).
func (r *Reconciler) getWorkload(ctx context.Context, namespace string, ref *metav1.OwnerReference) (client.Object, error) {
	obj := newWorkload(ref)
	if obj == nil {
		return nil, nil
	}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting %s %s/%s: %w", ref.Kind, namespace, ref.Name, err)
	}
	if obj.GetUID() != ref.UID {
		return nil, nil
	}
	return obj, nil
}

// newWorkload returns an empty object of the kind ref points to, when it is
// a workload kind whose annotations configure the PodGroup of its pods.
func newWorkload(ref *metav1.OwnerReference) client.Object {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil
	}
	switch (schema.GroupKind{Group: gv.Group, Kind: ref.Kind}) {
	case schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		return &appsv1.ReplicaSet{}
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		return &appsv1.StatefulSet{}
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		return &appsv1.DaemonSet{}
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		return &batchv1.Job{}
	}
	return nil
}

// deleteIfScaledToZero deletes a PodGroup this controller made for a
// ReplicaSet or StatefulSet that was scaled to zero, as Volcano does: a
// Deployment leaves its old ReplicaSets at zero replicas after a rollout,
// and their groups would otherwise linger in their queue. Should a pod of
// the workload appear again, the group is recreated.
func (r *Reconciler) deleteIfScaledToZero(ctx context.Context, pg *schedulingv1beta1.PodGroup) error {
	if !IsManaged(pg) || pg.DeletionTimestamp != nil {
		return nil
	}
	ref := metav1.GetControllerOf(pg)
	if ref == nil {
		return nil
	}
	obj, err := r.getWorkload(ctx, pg.Namespace, ref)
	if err != nil || obj == nil {
		// A deleted owner takes the group with it (garbage collection).
		return err
	}
	var replicas *int32
	switch w := obj.(type) {
	case *appsv1.ReplicaSet:
		replicas = w.Spec.Replicas
	case *appsv1.StatefulSet:
		replicas = w.Spec.Replicas
	default:
		return nil
	}
	if replicas == nil || *replicas != 0 {
		return nil
	}
	err = r.client.Delete(ctx, pg, client.Preconditions{UID: &pg.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting PodGroup %s of %s %s scaled to zero: %w", klog.KObj(pg), ref.Kind, ref.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Deleted PodGroup of a workload scaled to zero", "kind", ref.Kind, "workload", ref.Name)
	return nil
}

// SetupWithManager registers the pod index and the controller. The
// controller is driven by pods (joining or leaving a group), by their
// workloads (a changed group-min-member or scale), and by the deletion of a
// group's PodGroup (which is recreated while the group has live pods).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	// IndexField uses its context only to look the informer up, which does
	// not block before the manager starts.
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, GroupIndex, r.groupIndex); err != nil {
		return fmt.Errorf("indexing pods by group: %w", err)
	}
	workloadChanged := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
				!maps.Equal(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()) ||
				!maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
		},
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.groupOfPod), builder.WithPredicates(r.podMembershipChanged())).
		Watches(&schedulingv1beta1.PodGroup{}, handler.EnqueueRequestsFromMapFunc(groupOfPodGroup), builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return false },
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		}))
	for _, w := range []client.Object{&appsv1.ReplicaSet{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{}, &batchv1.Job{}} {
		b = b.Watches(w, handler.EnqueueRequestsFromMapFunc(groupOfWorkload), builder.WithPredicates(workloadChanged))
	}
	return b.Complete(r)
}

// groupIndex indexes a pod of our schedulers under its GroupName.
func (r *Reconciler) groupIndex(obj client.Object) []string {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !r.ours(pod) {
		return nil
	}
	return []string{GroupName(pod)}
}

// groupOfPod maps a pod to its group, unless it names another PodGroup.
func (r *Reconciler) groupOfPod(_ context.Context, obj client.Object) []reconcile.Request {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !r.ours(pod) {
		return nil
	}
	group := GroupName(pod)
	if name := pod.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]; name != "" && name != group {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.Namespace, Name: group}}}
}

// podMembershipChanged passes the pod events that can change what a group
// needs: a pod appears or goes, starts or stops being deleted or running,
// or changes the PodGroup it names. Status updates of running pods do not.
func (r *Reconciler) podMembershipChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*corev1.Pod)
			n, ok2 := e.ObjectNew.(*corev1.Pod)
			if !ok1 || !ok2 {
				return true
			}
			return o.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] != n.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] ||
				(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) ||
				finished(o) != finished(n)
		},
	}
}

// groupOfPodGroup maps a PodGroup named like the groups of this controller
// to its group.
func groupOfPodGroup(_ context.Context, obj client.Object) []reconcile.Request {
	if !strings.HasPrefix(obj.GetName(), batchv1alpha1.PodGroupNamePrefix) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}}
}

// groupOfWorkload maps a workload to the group of its pods.
func groupOfWorkload(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{
		Namespace: obj.GetNamespace(),
		Name:      batchv1alpha1.PodGroupNamePrefix + string(obj.GetUID()),
	}}}
}
