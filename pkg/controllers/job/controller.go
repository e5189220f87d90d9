// Package job runs Volcano Jobs (batch.volcano.sh/v1alpha1): it creates a
// Job's PodGroup, pods and plugin objects, follows its lifecycle policies,
// executes the Commands addressed to it and deletes it after its TTL. The
// decisions are made by package core; this package reads and writes.
package job

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controllers/job/core"
)

// Name is the controller's name.
const Name = "job"

// Field indexes the controller lists by.
const (
	podJobIndex     = "caldera.job.controllerUID"
	commandJobIndex = "caldera.job.commandTarget"
)

// createParallelism bounds concurrent pod creations of one Job.
const createParallelism = 16

// Reconciler reconciles Jobs.
type Reconciler struct {
	client         client.Client
	recorder       record.EventRecorder
	schedulerNames sets.Set[string]
	clock          clock.PassiveClock
	keys           core.KeyPair
	// expected are the writes the cache has yet to show, per Job.
	expected *expectations
}

// expectationTimeout bounds how long a reconcile waits for the cache to
// show the controller's own writes, should a watch event be lost; the
// wait is checked again every expectationRecheck, and at once on any
// event of the Job or its pods.
const (
	expectationTimeout = 60 * time.Second
	expectationRecheck = time.Second
)

var _ reconcile.Reconciler = &Reconciler{}

// NewReconciler returns a reconciler. schedulerNames are the schedulers
// that admit PodGroups before pods are created.
func NewReconciler(c client.Client, recorder record.EventRecorder, schedulerNames []string, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{client: c, recorder: recorder, schedulerNames: sets.New(schedulerNames...), clock: clk, keys: generateKeyPair,
		expected: newExpectations(expectationTimeout)}
}

// SetupWithManager registers the controller, its indexes and watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	ctx := context.Background()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, podJobIndex, func(o client.Object) []string {
		if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == "Job" && ref.APIVersion == batchv1alpha1.SchemeGroupVersion.String() {
			return []string{string(ref.UID)}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &busv1alpha1.Command{}, commandJobIndex, func(o client.Object) []string {
		if t := o.(*busv1alpha1.Command).TargetObject; t != nil && t.Kind == "Job" {
			return []string{t.Name}
		}
		return nil
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&batchv1alpha1.Job{}).
		Owns(&corev1.Pod{}).
		Owns(&schedulingv1beta1.PodGroup{}).
		Watches(&busv1alpha1.Command{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if t := o.(*busv1alpha1.Command).TargetObject; t != nil && t.Kind == "Job" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: t.Name}}}
			}
			return nil
		})).
		WithOptions(controllerOptions(workers)).
		Complete(r)
}

// +kubebuilder:rbac:groups=batch.volcano.sh,resources=jobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=batch.volcano.sh,resources=jobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=scheduling.volcano.sh,resources=podgroups,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=bus.volcano.sh,resources=commands,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=services;configmaps;secrets;persistentvolumeclaims,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconcile brings a Job one step closer to what its spec and policies ask.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	if apierrors.IsConflict(err) {
		// The Job changed since the cache showed it: the change's own
		// event brings it back with the new state. Returning the error
		// would instead back the Job off exponentially.
		klog.FromContext(ctx).V(4).Info("Job changed while being reconciled; waiting for the change", "job", req.NamespacedName, "err", err)
		return reconcile.Result{}, nil
	}
	return res, err
}

func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	logger := klog.FromContext(ctx)
	var job batchv1alpha1.Job
	if err := r.client.Get(ctx, req.NamespacedName, &job); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if job.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	defaulted := job.DeepCopy()
	batchv1alpha1.SetDefaults_Job(defaulted)
	plugins, err := core.NewPlugins(defaulted, r.keys)
	if err != nil {
		r.recorder.Event(&job, corev1.EventTypeWarning, "InvalidPlugin", err.Error())
		return reconcile.Result{}, reconcile.TerminalError(err)
	}
	pods, err := r.pods(ctx, &job)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !r.expected.satisfied(job.UID, job.ResourceVersion, pods, r.clock.Now()) {
		// The cache is behind this controller's own writes; their events
		// bring the Job back.
		logger.V(5).Info("Waiting for the cache to show the job's writes", "job", klog.KObj(&job))
		return reconcile.Result{RequeueAfter: expectationRecheck}, nil
	}
	pg, err := r.podGroup(ctx, &job)
	if err != nil {
		return reconcile.Result{}, err
	}
	cmds, err := r.commands(ctx, &job)
	if err != nil {
		return reconcile.Result{}, err
	}
	d := core.Decide(core.Input{
		Job: defaulted, Pods: pods, PodGroup: pg, Commands: cmds, Plugins: plugins,
		GatedByPodGroup: r.schedulerNames.Has(defaulted.Spec.SchedulerName),
		Now:             r.clock.Now(),
	})

	if d.DeleteJob {
		logger.V(2).Info("Deleting job after its TTL", "job", klog.KObj(&job))
		err := r.client.Delete(ctx, &job, client.PropagationPolicy(metav1.DeletePropagationBackground))
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	statusChanged := !equality.Semantic.DeepEqual(job.Status, d.Status)
	if d.StatusFirst && statusChanged {
		if err := r.writeStatus(ctx, &job, d.Status); err != nil {
			return reconcile.Result{}, err
		}
		statusChanged = false
	}
	if err := r.syncPodGroup(ctx, &job, pg, d.PodGroup); err != nil {
		return reconcile.Result{}, err
	}
	for _, o := range d.Objects {
		if err := r.syncObject(ctx, &job, o); err != nil {
			r.refused(&job, err)
			return reconcile.Result{}, err
		}
	}
	if err := r.createPods(ctx, job.UID, d.CreatePods); err != nil {
		r.refused(&job, err)
		return reconcile.Result{}, err
	}
	for _, p := range d.DeletePods {
		if err := r.client.Delete(ctx, p, client.Preconditions{UID: &p.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return reconcile.Result{}, fmt.Errorf("deleting pod %s: %w", p.Name, err)
		}
	}
	for _, c := range d.DeleteCommands {
		if err := r.client.Delete(ctx, c); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, fmt.Errorf("deleting command %s: %w", c.Name, err)
		}
	}
	if statusChanged {
		if err := r.writeStatus(ctx, &job, d.Status); err != nil {
			return reconcile.Result{}, err
		}
	}
	for _, e := range d.Events {
		r.recorder.Event(&job, e.Type, e.Reason, e.Message)
	}
	return reconcile.Result{RequeueAfter: d.RequeueAfter}, nil
}

// writeStatus replaces the Job's status, failing on a concurrent change so
// that a restart is never counted twice from a stale read.
func (r *Reconciler) writeStatus(ctx context.Context, job *batchv1alpha1.Job, st batchv1alpha1.JobStatus) error {
	updated := job.DeepCopy()
	updated.Status = st
	if err := r.client.Status().Update(ctx, updated); err != nil {
		return fmt.Errorf("updating status of job %s: %w", job.Name, err)
	}
	r.expected.statusWritten(job.UID, job.ResourceVersion, r.clock.Now())
	job.ResourceVersion = updated.ResourceVersion
	job.Status = st
	return nil
}

func (r *Reconciler) pods(ctx context.Context, job *batchv1alpha1.Job) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := r.client.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingFields{podJobIndex: string(job.UID)}); err != nil {
		return nil, fmt.Errorf("listing pods of job %s: %w", job.Name, err)
	}
	out := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

func (r *Reconciler) podGroup(ctx context.Context, job *batchv1alpha1.Job) (*schedulingv1beta1.PodGroup, error) {
	var pg schedulingv1beta1.PodGroup
	err := r.client.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: core.PodGroupName(job)}, &pg)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the PodGroup of job %s: %w", job.Name, err)
	}
	return &pg, nil
}

func (r *Reconciler) commands(ctx context.Context, job *batchv1alpha1.Job) ([]*busv1alpha1.Command, error) {
	var list busv1alpha1.CommandList
	if err := r.client.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingFields{commandJobIndex: job.Name}); err != nil {
		return nil, fmt.Errorf("listing commands of job %s: %w", job.Name, err)
	}
	var out []*busv1alpha1.Command
	for i := range list.Items {
		c := &list.Items[i]
		if c.DeletionTimestamp != nil || (c.TargetObject.UID != "" && c.TargetObject.UID != job.UID) {
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *busv1alpha1.Command) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	return out, nil
}

// syncPodGroup creates, updates (spec only: the scheduler owns status) or
// deletes the Job's PodGroup.
func (r *Reconciler) syncPodGroup(ctx context.Context, job *batchv1alpha1.Job, cur, want *schedulingv1beta1.PodGroup) error {
	switch {
	case want == nil && cur != nil:
		return client.IgnoreNotFound(r.client.Delete(ctx, cur))
	case want == nil:
		return nil
	case cur == nil:
		if err := r.client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the PodGroup of job %s: %w", job.Name, err)
		}
		return nil
	case !equality.Semantic.DeepEqual(cur.Spec, want.Spec):
		patched := cur.DeepCopy()
		patched.Spec = want.Spec
		if err := r.client.Patch(ctx, patched, client.MergeFrom(cur)); err != nil {
			return fmt.Errorf("updating the PodGroup of job %s: %w", job.Name, err)
		}
	}
	return nil
}

// syncObject creates a plugin object or claim the Job needs, owned by the
// Job, and keeps updatable ones current.
func (r *Reconciler) syncObject(ctx context.Context, job *batchv1alpha1.Job, d core.Desired) error {
	want := d.Object
	cur := want.DeepCopyObject().(client.Object)
	err := r.client.Get(ctx, client.ObjectKeyFromObject(want.(client.Object)), cur)
	switch {
	case apierrors.IsNotFound(err):
		obj := want.DeepCopyObject().(client.Object)
		if d.Fill != nil {
			if err := d.Fill(obj); err != nil {
				return err
			}
		}
		obj.SetOwnerReferences([]metav1.OwnerReference{core.OwnerRef(job)})
		if err := r.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading %T %s: %w", want, want.GetName(), err)
	case d.CreateOnly:
		return nil
	}
	// Only the svc plugin's hosts ConfigMap changes with the Job (scaling).
	cm, ok := want.(*corev1.ConfigMap)
	if !ok {
		return nil
	}
	existing := cur.(*corev1.ConfigMap)
	if equality.Semantic.DeepEqual(existing.Data, cm.Data) {
		return nil
	}
	updated := existing.DeepCopy()
	updated.Data = cm.Data
	return r.client.Update(ctx, updated)
}

// createPods creates the Job's pods, in parallel, and expects to see those
// that were made (or already existed).
func (r *Reconciler) createPods(ctx context.Context, uid types.UID, pods []*corev1.Pod) error {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		first   error
		created []string
		slots   = make(chan struct{}, createParallelism)
	)
	for _, p := range pods {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			err := r.client.Create(ctx, p)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil || apierrors.IsAlreadyExists(err):
				created = append(created, p.Name)
			case first == nil:
				first = fmt.Errorf("creating pod %s: %w", p.Name, err)
			}
		}()
	}
	wg.Wait()
	r.expected.podsCreated(uid, created, r.clock.Now())
	return first
}

// ReasonFailedCreate is the reason of the Warning a Job gets when the API
// server refuses an object the job controller creates for it.
const ReasonFailedCreate = "FailedCreate"

// refused tells the Job when the API server refused one of its objects for
// a reason retrying alone will not cure (a quota, a policy, an invalid
// object): `calderactl explain` shows it. The write is retried all the same.
func (r *Reconciler) refused(job *batchv1alpha1.Job, err error) {
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
		r.recorder.Event(job, corev1.EventTypeWarning, ReasonFailedCreate, err.Error())
	}
}

// generateKeyPair makes the ssh plugin's key pair.
func generateKeyPair() ([]byte, []byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	pub, err := ssh.NewPublicKey(&key.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return priv, ssh.MarshalAuthorizedKey(pub), nil
}
