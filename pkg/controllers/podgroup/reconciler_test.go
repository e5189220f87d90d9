package podgroup

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	apischeme "github.com/caldera-sh/caldera/apis/scheme"
)

var errCrash = errors.New("simulated crash")

// fixture is a reconciler over a fake API server whose writes are counted
// and can be made to fail.
type fixture struct {
	client   client.Client
	recorder *events.FakeRecorder
	writes   int
	// failAt makes the failAt-th write fail (1-based; 0 never), before it
	// happens or, with failAfter, after it happened.
	failAt    int
	failAfter bool
}

func newFixture(t *testing.T, objs ...client.Object) *fixture {
	t.Helper()
	scheme, err := apischeme.New()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{recorder: events.NewFakeRecorder(10)}
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
	objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}})
	f.client = fake.NewClientBuilder().
		WithScheme(scheme).
		WithObjects(objs...).
		WithStatusSubresource(&schedulingv1beta1.PodGroup{}).
		WithIndex(&corev1.Pod{}, GroupIndex, (&Reconciler{schedulerNames: sets.New("volcano")}).groupIndex).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				return write(func() error { return c.Create(ctx, obj, opts...) })
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				return write(func() error { return c.Patch(ctx, obj, patch, opts...) })
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				return write(func() error { return c.Delete(ctx, obj, opts...) })
			},
		}).
		Build()
	return f
}

func (f *fixture) reconciler() *Reconciler {
	return NewReconciler(f.client, f.recorder, []string{"volcano"})
}

func (f *fixture) reconcile(t *testing.T, group string) error {
	t.Helper()
	_, err := f.reconciler().Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: group}})
	return err
}

// state is what the tests compare: every PodGroup (name → minMember, queue)
// and the group each pod names.
type state struct {
	PodGroups map[string]string
	Pods      map[string]string
}

func (f *fixture) state(t *testing.T) state {
	t.Helper()
	s := state{PodGroups: map[string]string{}, Pods: map[string]string{}}
	var pgs schedulingv1beta1.PodGroupList
	if err := f.client.List(t.Context(), &pgs); err != nil {
		t.Fatal(err)
	}
	for _, pg := range pgs.Items {
		s.PodGroups[pg.Name] = fmt.Sprintf("minMember=%d queue=%s managed=%v", pg.Spec.MinMember, pg.Spec.Queue, IsManaged(&pg))
	}
	var pods corev1.PodList
	if err := f.client.List(t.Context(), &pods); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		s.Pods[p.Name] = p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]
	}
	return s
}

func TestReconcile(t *testing.T) {
	web := makeReplicaSet("ns", "web").Annotation(schedulingv1beta1.GroupMinMemberAnnotation, "3")
	cases := map[string]struct {
		objs    []client.Object
		group   string
		want    state
		wantErr error
	}{
		"a plain pod gets a group of its own": {
			objs:  []client.Object{makePod("ns", "p").Obj()},
			group: "podgroup-uid-p",
			want: state{
				PodGroups: map[string]string{"podgroup-uid-p": "minMember=1 queue=default managed=true"},
				Pods:      map[string]string{"p": "podgroup-uid-p"},
			},
		},
		"the live pods of a workload share one group; others are left alone": {
			objs: []client.Object{
				web.Obj(),
				web.Owns(makePod("ns", "web-a")).Obj(),
				web.Owns(makePod("ns", "web-b")).Annotation(schedulingv1beta1.KubeGroupNameAnnotation, "podgroup-uid-web").Obj(),
				web.Owns(makePod("ns", "web-c")).Obj(),
				web.Owns(makePod("ns", "web-own")).Annotation(schedulingv1beta1.KubeGroupNameAnnotation, "spark-pg").Obj(),
				web.Owns(makePod("ns", "web-other-scheduler")).SchedulerName("default-scheduler").Obj(),
				web.Owns(makePod("ns", "web-done")).Phase(corev1.PodSucceeded).Obj(),
			},
			group: "podgroup-uid-web",
			want: state{
				PodGroups: map[string]string{"podgroup-uid-web": "minMember=3 queue=default managed=true"},
				Pods: map[string]string{
					"web-a": "podgroup-uid-web", "web-b": "podgroup-uid-web", "web-c": "podgroup-uid-web",
					"web-own": "spark-pg", "web-other-scheduler": "", "web-done": "",
				},
			},
		},
		"a PodGroup someone else created under the name is used, not changed": {
			objs: []client.Object{
				web.Obj(),
				web.Owns(makePod("ns", "web-a")).Obj(),
				&schedulingv1beta1.PodGroup{
					ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-web"},
					Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 5, Queue: "theirs"},
				},
			},
			group: "podgroup-uid-web",
			want: state{
				PodGroups: map[string]string{"podgroup-uid-web": "minMember=5 queue=theirs managed=false"},
				Pods:      map[string]string{"web-a": "podgroup-uid-web"},
			},
		},
		"a PodGroup someone else created is used even when group-min-member is bad": {
			objs: []client.Object{
				makeReplicaSet("ns", "web").Annotation(schedulingv1beta1.GroupMinMemberAnnotation, "many").Obj(),
				web.Owns(makePod("ns", "web-a")).Obj(),
				&schedulingv1beta1.PodGroup{
					ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-web"},
					Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 2, Queue: "theirs"},
				},
			},
			group: "podgroup-uid-web",
			want: state{
				PodGroups: map[string]string{"podgroup-uid-web": "minMember=2 queue=theirs managed=false"},
				Pods:      map[string]string{"web-a": "podgroup-uid-web"},
			},
		},
		"a managed PodGroup follows a changed group-min-member": {
			objs: []client.Object{
				makeReplicaSet("ns", "web").Annotation(schedulingv1beta1.GroupMinMemberAnnotation, "4").Obj(),
				web.Owns(makePod("ns", "web-a")).Annotation(schedulingv1beta1.KubeGroupNameAnnotation, "podgroup-uid-web").Obj(),
				&schedulingv1beta1.PodGroup{
					ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "podgroup-uid-web", Labels: map[string]string{ManagedByLabel: ManagedByValue}},
					Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 3, Queue: "q"},
				},
			},
			group: "podgroup-uid-web",
			want: state{
				PodGroups: map[string]string{"podgroup-uid-web": "minMember=4 queue=q managed=true"},
				Pods:      map[string]string{"web-a": "podgroup-uid-web"},
			},
		},
		"a pod that names its own deleted group gets it back": {
			objs:  []client.Object{makePod("ns", "p").Annotation(schedulingv1beta1.KubeGroupNameAnnotation, "podgroup-uid-p").Obj()},
			group: "podgroup-uid-p",
			want: state{
				PodGroups: map[string]string{"podgroup-uid-p": "minMember=1 queue=default managed=true"},
				Pods:      map[string]string{"p": "podgroup-uid-p"},
			},
		},
		"the group of a workload scaled to zero is deleted": {
			objs: []client.Object{
				makeReplicaSet("ns", "web").Replicas(0).Obj(),
				managedGroupOf("web"),
			},
			group: "podgroup-uid-web",
			want:  state{PodGroups: map[string]string{}, Pods: map[string]string{}},
		},
		"the group of a workload scaled to zero is kept while it has live pods": {
			objs: []client.Object{
				makeReplicaSet("ns", "web").Replicas(0).Obj(),
				web.Owns(makePod("ns", "web-a")).Annotation(schedulingv1beta1.KubeGroupNameAnnotation, "podgroup-uid-web").Obj(),
				managedGroupOf("web"),
			},
			group: "podgroup-uid-web",
			want: state{
				PodGroups: map[string]string{"podgroup-uid-web": "minMember=1 queue=default managed=true"},
				Pods:      map[string]string{"web-a": "podgroup-uid-web"},
			},
		},
		"a group without pods is kept while its workload has replicas": {
			objs:  []client.Object{makeReplicaSet("ns", "web").Obj(), managedGroupOf("web")},
			group: "podgroup-uid-web",
			want: state{
				PodGroups: map[string]string{"podgroup-uid-web": "minMember=1 queue=default managed=true"},
				Pods:      map[string]string{},
			},
		},
		"a group someone else made for a workload scaled to zero is kept": {
			objs: []client.Object{
				makeReplicaSet("ns", "web").Replicas(0).Obj(),
				func() *schedulingv1beta1.PodGroup {
					pg := managedGroupOf("web")
					pg.Labels = nil
					return pg
				}(),
			},
			group: "podgroup-uid-web",
			want: state{
				PodGroups: map[string]string{"podgroup-uid-web": "minMember=1 queue=default managed=false"},
				Pods:      map[string]string{},
			},
		},
		"a bad group-min-member creates nothing": {
			objs: []client.Object{
				makeReplicaSet("ns", "web").Annotation(schedulingv1beta1.GroupMinMemberAnnotation, "all").Obj(),
				web.Owns(makePod("ns", "web-a")).Obj(),
			},
			group:   "podgroup-uid-web",
			want:    state{PodGroups: map[string]string{}, Pods: map[string]string{"web-a": ""}},
			wantErr: ErrInvalidMinMember,
		},
		"a pod whose workload is not known yet waits for it": {
			objs:    []client.Object{web.Owns(makePod("ns", "web-a")).Obj()},
			group:   "podgroup-uid-web",
			want:    state{PodGroups: map[string]string{}, Pods: map[string]string{"web-a": ""}},
			wantErr: ErrOwnerNotFound,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.objs...)
			err := f.reconcile(t, tc.group)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, f.state(t)); diff != "" {
				t.Errorf("state (-want,+got):\n%s", diff)
			}
			// A second reconcile (or one after a restart) writes nothing.
			f.writes = 0
			if err := f.reconcile(t, tc.group); !errors.Is(err, tc.wantErr) {
				t.Fatalf("second reconcile: error = %v, want %v", err, tc.wantErr)
			}
			if f.writes != 0 {
				t.Errorf("second reconcile wrote %d times, want 0", f.writes)
			}
		})
	}
}

func managedGroupOf(rs string) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "podgroup-uid-" + rs,
			Labels: map[string]string{ManagedByLabel: ManagedByValue},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: types.UID("uid-" + rs), Controller: new(true),
			}},
		},
		Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "default"},
	}
}

func TestReconcileInvalidMinMemberIsTerminalAndReported(t *testing.T) {
	web := makeReplicaSet("ns", "web").Annotation(schedulingv1beta1.GroupMinMemberAnnotation, "0")
	f := newFixture(t, web.Obj(), web.Owns(makePod("ns", "web-a")).Obj())
	err := f.reconcile(t, "podgroup-uid-web")
	if !errors.Is(err, reconcile.TerminalError(nil)) {
		t.Errorf("error %v is not terminal", err)
	}
	select {
	case e := <-f.recorder.Events:
		want := `Warning InvalidGroupMinMember invalid scheduling.volcano.sh/group-min-member annotation: "0" must be at least 1`
		if e != want {
			t.Errorf("event = %q, want %q", e, want)
		}
	default:
		t.Error("no event recorded")
	}
}

// TestReconcileSurvivesACrashAtEveryWrite stops the reconciler at each of
// its writes in turn (before the write reaches the API server, and after),
// then runs a fresh reconciler, as after a restart: the result must be the
// same as without a crash, with exactly one PodGroup.
func TestReconcileSurvivesACrashAtEveryWrite(t *testing.T) {
	web := makeReplicaSet("ns", "web").Annotation(schedulingv1beta1.GroupMinMemberAnnotation, "3")
	objs := func() []client.Object {
		return []client.Object{
			web.Obj(),
			web.Owns(makePod("ns", "web-a").Created(second(1))).Obj(),
			web.Owns(makePod("ns", "web-b").Created(second(2))).Obj(),
			web.Owns(makePod("ns", "web-c").Created(second(3))).Obj(),
		}
	}
	ref := newFixture(t, objs()...)
	if err := ref.reconcile(t, "podgroup-uid-web"); err != nil {
		t.Fatal(err)
	}
	want, writes := ref.state(t), ref.writes
	if writes != 4 {
		t.Fatalf("a clean reconcile wrote %d times, want 4 (one PodGroup, three pods)", writes)
	}
	for _, after := range []bool{false, true} {
		for n := 1; n <= writes; n++ {
			t.Run(fmt.Sprintf("write %d, after=%v", n, after), func(t *testing.T) {
				f := newFixture(t, objs()...)
				f.failAt, f.failAfter = n, after
				if err := f.reconcile(t, "podgroup-uid-web"); !errors.Is(err, errCrash) {
					t.Fatalf("error = %v, want the simulated crash", err)
				}
				f.failAt = 0
				if err := f.reconcile(t, "podgroup-uid-web"); err != nil {
					t.Fatalf("reconcile after the crash: %v", err)
				}
				if diff := cmp.Diff(want, f.state(t)); diff != "" {
					t.Errorf("state after the crash (-want,+got):\n%s", diff)
				}
			})
		}
	}
}

func TestGroupOfPod(t *testing.T) {
	r := NewReconciler(nil, nil, []string{"volcano", "caldera"})
	cases := map[string]struct {
		pod  *corev1.Pod
		want []string
	}{
		"an unannotated pod of ours":               {pod: makePod("ns", "p").Obj(), want: []string{"ns/podgroup-uid-p"}},
		"a pod of our second scheduler":            {pod: makePod("ns", "p").SchedulerName("caldera").Obj(), want: []string{"ns/podgroup-uid-p"}},
		"a pod annotated with its own group":       {pod: makePod("ns", "p").Annotation(schedulingv1beta1.KubeGroupNameAnnotation, "podgroup-uid-p").Obj(), want: []string{"ns/podgroup-uid-p"}},
		"a pod naming another group":               {pod: makePod("ns", "p").Annotation(schedulingv1beta1.KubeGroupNameAnnotation, "train").Obj()},
		"a pod of another scheduler":               {pod: makePod("ns", "p").SchedulerName("default-scheduler").Obj()},
		"a pod of a workload maps to its workload": {pod: makeReplicaSet("ns", "web").Owns(makePod("ns", "web-a")).Obj(), want: []string{"ns/podgroup-uid-web"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, req := range r.groupOfPod(t.Context(), tc.pod) {
				got = append(got, req.String())
			}
			sort.Strings(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("groupOfPod (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestOrderedStatefulSetGangIsReported: a StatefulSet that creates its pods
// one at a time can never form a gang of more than one; the controller
// still makes its PodGroup and says why it waits.
func TestOrderedStatefulSetGangIsReported(t *testing.T) {
	for _, policy := range []appsv1.PodManagementPolicyType{"", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement} {
		sts := &appsv1.StatefulSet{
			TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "uid-db",
				Annotations: map[string]string{schedulingv1beta1.GroupMinMemberAnnotation: "3"}},
			Spec: appsv1.StatefulSetSpec{PodManagementPolicy: policy},
		}
		f := newFixture(t, sts, makePod("ns", "db-0").ControlledBy("apps/v1", "StatefulSet", "db", sts.UID).Obj())
		if err := f.reconcile(t, "podgroup-uid-db"); err != nil {
			t.Fatal(err)
		}
		var got string
		select {
		case got = <-f.recorder.Events:
		default:
		}
		want := ""
		if policy != appsv1.ParallelPodManagement {
			want = "Warning GangCannotForm StatefulSet db creates its pods one at a time (podManagementPolicy OrderedReady), so its gang of 3 (scheduling.volcano.sh/group-min-member) never has its pods at once: set podManagementPolicy: Parallel"
		}
		if got != want {
			t.Errorf("policy %q: event %q, want %q", policy, got, want)
		}
	}
}
