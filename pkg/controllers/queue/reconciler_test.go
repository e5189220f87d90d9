package queue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	apischeme "github.com/caldera-sh/caldera/apis/scheme"
)

var (
	t0       = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	errCrash = errors.New("simulated crash")
)

const (
	open    = schedulingv1beta1.QueueStateOpen
	closing = schedulingv1beta1.QueueStateClosing
	closed  = schedulingv1beta1.QueueStateClosed
)

// fixture is a reconciler over a fake API server whose writes are counted
// and can be made to fail.
type fixture struct {
	client   client.Client
	recorder *events.FakeRecorder
	clock    *clocktesting.FakePassiveClock
	writes   int
	// failAt makes the failAt-th write fail (1-based; 0 never), before it
	// reaches the server or, with failAfter, after it was applied.
	failAt    int
	failAfter bool
	// getHook, when set, may replace what a Get returns.
	getHook func(obj client.Object)
}

func newFixture(t *testing.T, objs ...client.Object) *fixture {
	t.Helper()
	scheme, err := apischeme.New()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{recorder: events.NewFakeRecorder(20), clock: clocktesting.NewFakePassiveClock(t0)}
	write := func(do func() error) error {
		f.writes++
		if f.writes != f.failAt {
			return do()
		}
		if f.failAfter {
			if err := do(); err != nil {
				return err
			}
		}
		return errCrash
	}
	f.client = fake.NewClientBuilder().
		WithScheme(scheme).
		WithObjects(objs...).
		WithStatusSubresource(&schedulingv1beta1.Queue{}, &schedulingv1beta1.PodGroup{}).
		WithIndex(&schedulingv1beta1.PodGroup{}, PodGroupQueueIndex, indexPodGroupQueue).
		WithIndex(&schedulingv1beta1.Queue{}, ParentIndex, indexParent).
		WithIndex(&busv1alpha1.Command{}, CommandTargetIndex, indexCommandTarget).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if err := c.Get(ctx, key, obj, opts...); err != nil {
					return err
				}
				if f.getHook != nil {
					f.getHook(obj)
				}
				return nil
			},
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				return write(func() error { return c.Create(ctx, obj, opts...) })
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				return write(func() error { return c.Patch(ctx, obj, patch, opts...) })
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				return write(func() error { return c.Delete(ctx, obj, opts...) })
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				return write(func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
			},
		}).
		Build()
	return f
}

func (f *fixture) reconcile(t *testing.T, queue string) (reconcile.Result, error) {
	t.Helper()
	r := NewReconciler(f.client, f.recorder, f.clock, time.Minute)
	return r.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: queue}})
}

// settle reconciles the queues in rounds, as the watches would, until a
// round writes nothing.
func (f *fixture) settle(t *testing.T, queues ...string) {
	t.Helper()
	for range 5 {
		before := f.writes
		for _, q := range queues {
			if _, err := f.reconcile(t, q); err != nil {
				t.Fatalf("reconciling %s: %v", q, err)
			}
		}
		if f.writes == before {
			return
		}
	}
	t.Fatalf("queues %v did not settle", queues)
}

// state is what the tests compare: each queue's state and closed-by-parent
// mark, and the commands left.
type state struct {
	Queues   map[string]string
	Commands []string
}

func (f *fixture) state(t *testing.T) state {
	t.Helper()
	s := state{Queues: map[string]string{}}
	var queues schedulingv1beta1.QueueList
	if err := f.client.List(t.Context(), &queues); err != nil {
		t.Fatal(err)
	}
	for _, q := range queues.Items {
		s.Queues[q.Name] = fmt.Sprintf("%s mark=%q", q.Status.State, q.Annotations[schedulingv1beta1.ClosedByParentAnnotation])
	}
	var cmds busv1alpha1.CommandList
	if err := f.client.List(t.Context(), &cmds); err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds.Items {
		s.Commands = append(s.Commands, c.Name)
	}
	return s
}

func q(name string) *schedtesting.QueueWrapper { return schedtesting.MakeQueue(name) }

func runningGroupIn(queue, name string) *schedulingv1beta1.PodGroup {
	return schedtesting.MakePodGroup(name, "ns").Queue(queue).Phase(schedulingv1beta1.PodGroupRunning).Obj()
}

func TestReconcile(t *testing.T) {
	cases := map[string]struct {
		objs   []client.Object
		queues []string
		want   state
	}{
		"root and default are created when missing, and open": {
			queues: []string{"root", "default"},
			want:   state{Queues: map[string]string{"root": `Open mark=""`, "default": `Open mark=""`}},
		},
		"another missing queue is not created": {
			queues: []string{"team"},
			want:   state{Queues: map[string]string{}},
		},
		"CloseQueue on a queue with running work leaves it Closing": {
			objs: []client.Object{
				q("team").State(open).Obj(),
				runningGroupIn("team", "train"),
				schedtesting.MakePodGroup("done", "ns").Queue("team").Phase(schedulingv1beta1.PodGroupCompleted).Obj(),
				schedtesting.MakePodGroup("waiting", "ns").Queue("team").Phase(schedulingv1beta1.PodGroupPending).Obj(),
				makeCommand("close", busv1alpha1.CloseQueueAction, "team").Obj(),
			},
			queues: []string{"team"},
			want:   state{Queues: map[string]string{"team": `Closing mark=""`}},
		},
		"CloseQueue on an idle queue closes it": {
			objs: []client.Object{
				q("team").State(open).Obj(),
				runningGroupIn("other", "train"),
				makeCommand("close", busv1alpha1.CloseQueueAction, "team").Obj(),
			},
			queues: []string{"team"},
			want:   state{Queues: map[string]string{"team": `Closed mark=""`}},
		},
		"commands run oldest first": {
			objs: []client.Object{
				q("team").State(open).Obj(),
				makeCommand("b-open", busv1alpha1.OpenQueueAction, "team").Created(at(time.Second)).Obj(),
				makeCommand("a-close", busv1alpha1.CloseQueueAction, "team").Created(at(0)).Obj(),
			},
			queues: []string{"team"},
			want:   state{Queues: map[string]string{"team": `Open mark=""`}},
		},
		"OpenQueue reopens a closed queue": {
			objs: []client.Object{
				q("team").State(closed).Obj(),
				makeCommand("open", busv1alpha1.OpenQueueAction, "team").Obj(),
			},
			queues: []string{"team"},
			want:   state{Queues: map[string]string{"team": `Open mark=""`}},
		},
		"a command addressed with the v1alpha1 API version is executed": {
			objs: []client.Object{
				q("team").State(open).Obj(),
				makeCommand("close", busv1alpha1.CloseQueueAction, "team").Target("scheduling.volcano.sh/v1alpha1", "Queue", "team").Obj(),
			},
			queues: []string{"team"},
			want:   state{Queues: map[string]string{"team": `Closed mark=""`}},
		},
		"a command addressed to a Job of the same name is not the queue's": {
			objs: []client.Object{
				q("team").State(open).Obj(),
				makeCommand("abort", busv1alpha1.AbortJobAction, "team").Target("batch.volcano.sh/v1alpha1", "Job", "team").Obj(),
			},
			queues: []string{"team"},
			want:   state{Queues: map[string]string{"team": `Open mark=""`}, Commands: []string{"abort"}},
		},
		"CloseQueue on root is refused and dropped": {
			objs: []client.Object{
				q("root").State(open).Obj(),
				makeCommand("close", busv1alpha1.CloseQueueAction, "root").Obj(),
			},
			queues: []string{"root"},
			want:   state{Queues: map[string]string{"root": `Open mark=""`}},
		},
		"the children of a closed queue are closed and marked, grandchildren too": {
			objs: []client.Object{
				q("root").State(open).Obj(),
				q("eng").Parent("root").State(open).Obj(),
				q("ml").Parent("eng").State(open).Obj(),
				q("web").Parent("eng").State(closed).Obj(),
				runningGroupIn("ml", "train"),
				makeCommand("close", busv1alpha1.CloseQueueAction, "eng").Obj(),
			},
			queues: []string{"root", "eng", "ml", "web"},
			want: state{Queues: map[string]string{
				"root": `Open mark=""`, "eng": `Closed mark=""`, "ml": `Closing mark="true"`, "web": `Closed mark=""`,
			}},
		},
		"reopening a parent reopens the children it closed, not those closed by hand": {
			objs: []client.Object{
				q("root").State(open).Obj(),
				q("eng").Parent("root").State(closed).Obj(),
				q("ml").Parent("eng").State(closed).Annotation(schedulingv1beta1.ClosedByParentAnnotation, "true").Obj(),
				q("web").Parent("eng").State(closed).Obj(),
				makeCommand("open", busv1alpha1.OpenQueueAction, "eng").Obj(),
			},
			queues: []string{"root", "eng", "ml", "web"},
			want: state{Queues: map[string]string{
				"root": `Open mark=""`, "eng": `Open mark=""`, "ml": `Open mark="false"`, "web": `Closed mark=""`,
			}},
		},
		"a queue without parent is a child of root": {
			objs: []client.Object{
				q("root").State(closed).Obj(),
				q("team").State(open).Obj(),
			},
			queues: []string{"team"},
			want:   state{Queues: map[string]string{"root": `Closed mark=""`, "team": `Closed mark="true"`}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.objs...)
			f.settle(t, tc.queues...)
			if diff := cmp.Diff(tc.want, f.state(t)); diff != "" {
				t.Errorf("state (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestWellKnownQueuesAreDefaulted(t *testing.T) {
	f := newFixture(t)
	f.settle(t, "root", "default")
	for name, want := range map[string]schedulingv1beta1.QueueSpec{
		"root":    {Weight: 1, Reclaimable: new(true)},
		"default": {Weight: 1, Reclaimable: new(true), Parent: "root"},
	} {
		var got schedulingv1beta1.Queue
		if err := f.client.Get(t.Context(), client.ObjectKey{Name: name}, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got.Spec); diff != "" {
			t.Errorf("spec of %s (-want,+got):\n%s", name, diff)
		}
	}
}

func TestCommandEvents(t *testing.T) {
	f := newFixture(t,
		q("root").State(open).Obj(),
		q("team").State(open).Obj(),
		runningGroupIn("team", "train"),
		makeCommand("close-root", busv1alpha1.CloseQueueAction, "root").Obj(),
		makeCommand("close-team", busv1alpha1.CloseQueueAction, "team").Obj(),
	)
	f.settle(t, "root", "team")
	var got []string
	for len(f.recorder.Events) > 0 {
		got = append(got, <-f.recorder.Events)
	}
	want := []string{
		"Warning RootQueue Command default/close-root not executed: the root queue cannot be closed",
		"Normal CloseQueue Command default/close-team executed; the queue is Closing",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want,+got):\n%s", diff)
	}
}

// TestOpenWaitsForTheParent: OpenQueue on the child of a closed parent is
// kept while the parent may still be opened, then dropped with a warning.
func TestOpenWaitsForTheParent(t *testing.T) {
	f := newFixture(t,
		q("eng").State(closed).Obj(),
		q("ml").Parent("eng").State(closed).Obj(),
		makeCommand("open", busv1alpha1.OpenQueueAction, "ml").Obj(),
	)
	f.clock.SetTime(t0.Add(20 * time.Second))
	res, err := f.reconcile(t, "ml")
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != 40*time.Second {
		t.Errorf("requeue after %s, want 40s (the rest of the minute the command may wait)", res.RequeueAfter)
	}
	if diff := cmp.Diff(state{Queues: map[string]string{"eng": `Closed mark=""`, "ml": `Closed mark=""`}, Commands: []string{"open"}}, f.state(t)); diff != "" {
		t.Errorf("state while waiting (-want,+got):\n%s", diff)
	}

	f.clock.SetTime(t0.Add(time.Minute))
	if res, err := f.reconcile(t, "ml"); err != nil || res.RequeueAfter != 0 {
		t.Fatalf("reconcile after the wait: %v, %+v", err, res)
	}
	if diff := cmp.Diff(state{Queues: map[string]string{"eng": `Closed mark=""`, "ml": `Closed mark=""`}}, f.state(t)); diff != "" {
		t.Errorf("state after the wait (-want,+got):\n%s", diff)
	}
	want := "Warning ParentClosed Command default/open not executed: its parent queue is closed; open the parent first (waited 1m0s)"
	if e := <-f.recorder.Events; e != want {
		t.Errorf("event = %q, want %q", e, want)
	}
}

// TestCommandForAMissingQueue: a Command addressed to a queue that does not
// exist waits (the queue may be on its way), then is dropped with a warning.
func TestCommandForAMissingQueue(t *testing.T) {
	f := newFixture(t, makeCommand("close", busv1alpha1.CloseQueueAction, "ghost").Obj())
	f.clock.SetTime(t0.Add(45 * time.Second))
	res, err := f.reconcile(t, "ghost")
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != 15*time.Second {
		t.Errorf("requeue after %s, want 15s", res.RequeueAfter)
	}
	if diff := cmp.Diff(state{Queues: map[string]string{}, Commands: []string{"close"}}, f.state(t)); diff != "" {
		t.Errorf("state while waiting (-want,+got):\n%s", diff)
	}
	f.clock.SetTime(t0.Add(time.Minute))
	if _, err := f.reconcile(t, "ghost"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(state{Queues: map[string]string{}}, f.state(t)); diff != "" {
		t.Errorf("state after the wait (-want,+got):\n%s", diff)
	}
	want := "Warning QueueNotFound Command not executed: queue ghost does not exist (waited 1m0s)"
	if e := <-f.recorder.Events; e != want {
		t.Errorf("event = %q, want %q", e, want)
	}
}

// TestStaleReadDoesNotUndoANewerState: a decision made from a stale copy of
// the queue is rejected by the API server instead of overwriting the state.
func TestStaleReadDoesNotUndoANewerState(t *testing.T) {
	f := newFixture(t, q("team").State(open).Obj())
	var stale schedulingv1beta1.Queue
	if err := f.client.Get(t.Context(), client.ObjectKey{Name: "team"}, &stale); err != nil {
		t.Fatal(err)
	}
	// Someone (a command executed a moment ago) closed the queue.
	closedNow := stale.DeepCopy()
	closedNow.Status.State = closed
	if err := f.client.Status().Update(t.Context(), closedNow); err != nil {
		t.Fatal(err)
	}
	// The reconciler reads the old copy and a stale parent: it would reopen.
	f.getHook = func(obj client.Object) {
		if qq, ok := obj.(*schedulingv1beta1.Queue); ok && qq.Name == "team" {
			stale.DeepCopyInto(qq)
		}
	}
	stale.Status.State = ""
	if _, err := f.reconcile(t, "team"); !apierrors.IsConflict(err) {
		t.Fatalf("error = %v, want a conflict", err)
	}
	f.getHook = nil
	if diff := cmp.Diff(state{Queues: map[string]string{"team": `Closed mark=""`}}, f.state(t)); diff != "" {
		t.Errorf("state (-want,+got):\n%s", diff)
	}
}

// TestReconcileSurvivesACrashAtEveryWrite stops the reconciler at each of
// its writes in turn (before the write reaches the API server, and after),
// then reconciles again, as after a restart: the result must be the same as
// without a crash.
func TestReconcileSurvivesACrashAtEveryWrite(t *testing.T) {
	scenarios := map[string]struct {
		objs  func() []client.Object
		queue string
	}{
		"CloseQueue with running work": {
			objs: func() []client.Object {
				return []client.Object{
					q("team").State(open).Obj(),
					runningGroupIn("team", "train"),
					makeCommand("close", busv1alpha1.CloseQueueAction, "team").Obj(),
				}
			},
			queue: "team",
		},
		"closed with a closed parent": {
			objs: func() []client.Object {
				return []client.Object{q("eng").State(closed).Obj(), q("ml").Parent("eng").State(open).Obj()}
			},
			queue: "ml",
		},
		"reopened with its parent": {
			objs: func() []client.Object {
				return []client.Object{
					q("eng").State(open).Obj(),
					q("ml").Parent("eng").State(closed).Annotation(schedulingv1beta1.ClosedByParentAnnotation, "true").Obj(),
				}
			},
			queue: "ml",
		},
		"manual close of a queue its parent closed": {
			objs: func() []client.Object {
				return []client.Object{
					q("eng").State(closed).Obj(),
					q("ml").Parent("eng").State(closed).Annotation(schedulingv1beta1.ClosedByParentAnnotation, "true").Obj(),
					makeCommand("close", busv1alpha1.CloseQueueAction, "ml").Obj(),
				}
			},
			queue: "ml",
		},
	}
	for name, sc := range scenarios {
		t.Run(name, func(t *testing.T) {
			ref := newFixture(t, sc.objs()...)
			ref.settle(t, sc.queue)
			want, writes := ref.state(t), ref.writes
			if writes == 0 {
				t.Fatal("the scenario writes nothing")
			}
			for _, after := range []bool{false, true} {
				for n := 1; n <= writes; n++ {
					f := newFixture(t, sc.objs()...)
					f.failAt, f.failAfter = n, after
					if _, err := f.reconcile(t, sc.queue); !errors.Is(err, errCrash) {
						t.Fatalf("write %d, after=%v: error = %v, want the simulated crash", n, after, err)
					}
					f.failAt = 0
					f.settle(t, sc.queue)
					if diff := cmp.Diff(want, f.state(t)); diff != "" {
						t.Errorf("write %d, after=%v: state after the crash (-want,+got):\n%s", n, after, diff)
					}
				}
			}
		})
	}
}

func TestIsQueueTarget(t *testing.T) {
	cases := map[string]struct {
		ref  *metav1.OwnerReference
		want bool
	}{
		"nil":            {},
		"v1beta1 Queue":  {ref: &metav1.OwnerReference{APIVersion: "scheduling.volcano.sh/v1beta1", Kind: "Queue", Name: "q"}, want: true},
		"v1alpha1 Queue": {ref: &metav1.OwnerReference{APIVersion: "scheduling.volcano.sh/v1alpha1", Kind: "Queue", Name: "q"}, want: true},
		"a Job":          {ref: &metav1.OwnerReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "q"}},
		"another group":  {ref: &metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Queue", Name: "q"}},
		"no name":        {ref: &metav1.OwnerReference{APIVersion: "scheduling.volcano.sh/v1beta1", Kind: "Queue"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsQueueTarget(tc.ref); got != tc.want {
				t.Errorf("IsQueueTarget = %v, want %v", got, tc.want)
			}
		})
	}
}
