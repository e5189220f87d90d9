package binder

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// fakePods binds, or refuses the pods in fail with their error; a pod in
// applied is bound even though its bind answers with the error (the answer
// was lost). at is where each pod is bound; readErrs fail that many reads
// first.
type fakePods struct {
	mu       sync.Mutex
	fail     map[string]error
	applied  map[string]bool
	bound    []string
	at       map[string]string
	reads    int
	readErrs int
	// gone are pods the API server no longer has (deleted or replaced).
	gone map[string]bool
}

func (f *fakePods) Bind(_ context.Context, b *corev1.Binding) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.at == nil {
		f.at = map[string]string{}
	}
	if err := f.fail[b.Name]; err != nil {
		if f.applied[b.Name] && f.at[b.Name] == "" {
			f.at[b.Name] = b.Target.Name
		}
		return err
	}
	f.bound = append(f.bound, b.Name+"->"+b.Target.Name)
	f.at[b.Name] = b.Target.Name
	return nil
}

func (f *fakePods) BoundNode(_ context.Context, _, name string, _ types.UID) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.readErrs > 0 {
		f.readErrs--
		return "", false, errors.New("connection refused")
	}
	if f.gone[name] {
		return "", false, nil
	}
	return f.at[name], true, nil
}

type fakeCache struct {
	mu                               sync.Mutex
	assumed, forgot, confirmed, gone []string
	// refuse, when set, is AssumeGroup's answer.
	refuse error
}

func (f *fakeCache) Gone(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gone = append(f.gone, string(uid))
}

func (f *fakeCache) Confirm(uid types.UID, node string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.confirmed = append(f.confirmed, string(uid)+"->"+node)
}

func (f *fakeCache) Assume(t *api.TaskInfo, node string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.assumed = append(f.assumed, t.Name)
}

func (f *fakeCache) AssumeGroup(ps []api.Placement) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse != nil {
		return f.refuse
	}
	for _, p := range ps {
		f.assumed = append(f.assumed, p.Task.Name)
	}
	return nil
}

func (f *fakeCache) Forget(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgot = append(f.forgot, string(uid))
}

// drain runs the binder's workers until every queued bind is done.
func drain(t *testing.T, b *Binder) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	b.Wait()
	cancel()
	<-done
}

func task(job, name string) *api.TaskInfo {
	return &api.TaskInfo{UID: types.UID(name), Name: name, Namespace: "ns", Job: api.JobID("ns/" + job)}
}

func TestFailedBindDropsTheRestOfTheGang(t *testing.T) {
	pods := &fakePods{fail: map[string]error{"a-2": apierrors.NewForbidden(schema.GroupResource{Resource: "pods/binding"}, "a-2", errors.New("no"))}}
	cache := &fakeCache{}
	var results []string
	var mu sync.Mutex
	b := New(pods, cache, Options{Concurrency: 1, OnResult: func(r Result) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Err == nil:
			results = append(results, r.Task.Name+" bound")
		case errors.Is(r.Err, ErrGangAborted):
			results = append(results, r.Task.Name+" aborted")
		default:
			results = append(results, r.Task.Name+" failed")
		}
	}})
	for i := range 5 {
		b.Bind(task("a", fmt.Sprintf("a-%d", i)), "n1")
	}
	b.Bind(task("b", "b-0"), "n2")
	drain(t, b)

	want := []string{"a-0 bound", "a-1 bound", "a-2 failed", "a-3 aborted", "a-4 aborted", "b-0 bound"}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want,+got):\n%s", diff)
	}
	slices.Sort(cache.forgot)
	if diff := cmp.Diff([]string{"a-2", "a-3", "a-4"}, cache.forgot); diff != "" {
		t.Errorf("forgotten (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a-0->n1", "a-1->n1", "b-0->n2"}, pods.bound); diff != "" {
		t.Errorf("bound (-want,+got):\n%s", diff)
	}

	// The next attempt of the job binds again.
	pods.fail = nil
	b.Bind(task("a", "a-2"), "n1")
	drain(t, b)
	if got := pods.bound[len(pods.bound)-1]; got != "a-2->n1" {
		t.Errorf("retry: last bound %q, want a-2->n1", got)
	}
}

// A bind whose answer is an error may have been applied; the binder reads
// the pod before it gives the node's room back.
func TestBindWithLostAnswer(t *testing.T) {
	lost := errors.New("unexpected error when reading response body")
	unavailable := apierrors.NewServiceUnavailable("etcd leader changed")
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, "p", errors.New("pod p is already assigned to node \"n2\""))
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods/binding"}, "p", errors.New("RBAC caches not ready"))
	for _, tc := range []struct {
		name                      string
		err                       error
		applied                   bool
		boundBefore               string // a previous attempt's bind
		readErrs                  int
		wantErr                   bool
		wantForgot, wantConfirmed []string
		podGone                   bool
		wantGone                  []string
		wantReads                 int
	}{
		{name: "lost answer, applied", err: lost, applied: true, wantReads: 1},
		{name: "lost answer, not applied", err: lost, wantErr: true, wantForgot: []string{"p"}, wantReads: 1},
		{name: "server error, applied, reads retried until the server answers", err: unavailable, applied: true, readErrs: 3, wantReads: 4},
		{name: "already bound by an earlier attempt on another node", err: conflict, boundBefore: "n2", wantConfirmed: []string{"p->n2"}, wantReads: 1},
		{name: "refused: not applied, no read", err: forbidden, wantErr: true, wantForgot: []string{"p"}},
		{name: "the pod was replaced (409 on its UID): dropped from the cache", err: conflict, podGone: true, wantErr: true, wantForgot: []string{"p"}, wantGone: []string{"p"}, wantReads: 1},
		{name: "the pod was deleted (404): dropped from the cache", err: notFound, podGone: true, wantErr: true, wantForgot: []string{"p"}, wantGone: []string{"p"}, wantReads: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := &fakePods{fail: map[string]error{"p": tc.err}, applied: map[string]bool{"p": tc.applied}, readErrs: tc.readErrs, at: map[string]string{}, gone: map[string]bool{"p": tc.podGone}}
			if tc.boundBefore != "" {
				pods.at["p"] = tc.boundBefore
			}
			cache := &fakeCache{}
			var got []Result
			var mu sync.Mutex
			b := New(pods, cache, Options{Concurrency: 1, OnResult: func(r Result) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, r)
			}})
			b.Bind(task("j", "p"), "n1")
			drain(t, b)
			if len(got) != 1 || (got[0].Err != nil) != tc.wantErr {
				t.Fatalf("results %+v, want one with error %v", got, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantForgot, cache.forgot); diff != "" {
				t.Errorf("forgotten (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantConfirmed, cache.confirmed); diff != "" {
				t.Errorf("confirmed (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantGone, cache.gone); diff != "" {
				t.Errorf("gone (-want,+got):\n%s", diff)
			}
			if pods.reads != tc.wantReads {
				t.Errorf("read the pod %d times, want %d", pods.reads, tc.wantReads)
			}
		})
	}
}

// TestBusyWhileBindsAreQueued: a node is busy from the Bind that queues a
// pod for it until that bind is done, failed binds included, so that a
// scheduler giving a node up (NodeShard) waits for its binds there.
func TestBusyWhileBindsAreQueued(t *testing.T) {
	pods := &fakePods{fail: map[string]error{"b-0": apierrors.NewForbidden(schema.GroupResource{Resource: "pods/binding"}, "b-0", errors.New("no"))}}
	b := New(pods, &fakeCache{}, Options{Concurrency: 1})
	b.Bind(task("a", "a-0"), "n1")
	b.Bind(task("a", "a-1"), "n1")
	b.Bind(task("b", "b-0"), "n2")
	for _, n := range []string{"n1", "n2"} {
		if !b.Busy(n) {
			t.Errorf("%s is not busy with a bind queued for it", n)
		}
	}
	if b.Busy("n3") {
		t.Error("n3 is busy with no bind for it")
	}
	drain(t, b)
	for _, n := range []string{"n1", "n2"} {
		if b.Busy(n) {
			t.Errorf("%s is busy after its binds are done", n)
		}
	}
}

func TestBindGroupQueuesNothingTheCacheRefuses(t *testing.T) {
	pods := &fakePods{}
	cache := &fakeCache{refuse: errors.New("the node no longer has room")}
	b := New(pods, cache, Options{Concurrency: 2})
	group := []api.Placement{{Task: task("a", "a-0"), Node: "n1"}, {Task: task("a", "a-1"), Node: "n1"}}
	if err := b.BindGroup(group); err == nil {
		t.Fatal("BindGroup accepted a group the cache refused")
	}
	if b.Busy("n1") {
		t.Error("a refused group left binds queued on n1")
	}
	cache.refuse = nil
	if err := b.BindGroup(group); err != nil {
		t.Fatalf("BindGroup: %v", err)
	}
	drain(t, b)
	slices.Sort(pods.bound)
	if diff := cmp.Diff([]string{"a-0->n1", "a-1->n1"}, pods.bound); diff != "" {
		t.Errorf("bound (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a-0", "a-1"}, cache.assumed); diff != "" {
		t.Errorf("assumed (-want,+got):\n%s", diff)
	}
}

// gatedPods holds every bind of a pod named in held until release closes.
type gatedPods struct {
	fakePods
	held    map[string]bool
	release chan struct{}
	started chan string
}

func (g *gatedPods) Bind(ctx context.Context, b *corev1.Binding) error {
	g.started <- b.Name
	if g.held[b.Name] {
		<-g.release
	}
	return g.fakePods.Bind(ctx, b)
}

// An urgent bind does not wait behind the queue: with every regular
// worker stuck on a slow bind and more queued, it is bound.
func TestUrgentBindsGoFirst(t *testing.T) {
	pods := &gatedPods{held: map[string]bool{"a-0": true, "a-1": true}, release: make(chan struct{}), started: make(chan string, 10)}
	b := New(pods, &fakeCache{}, Options{Concurrency: 1})
	for i := range 3 {
		b.Bind(task("a", fmt.Sprintf("a-%d", i)), "n1")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	if got := <-pods.started; got != "a-0" {
		t.Fatalf("first bind started: %s, want a-0", got)
	}
	if err := b.Urgent().BindGroup([]api.Placement{{Task: task("f", "f-0"), Node: "n2"}}); err != nil {
		t.Fatal(err)
	}
	if got := <-pods.started; got != "f-0" {
		t.Errorf("bind started while a-0 is stuck: %s, want the urgent f-0", got)
	}
	close(pods.release)
	b.Wait()
	cancel()
	<-done
	if diff := cmp.Diff([]string{"a-0->n1", "a-1->n1", "a-2->n1", "f-0->n2"}, slices.Sorted(slices.Values(pods.bound))); diff != "" {
		t.Errorf("bound (-want,+got):\n%s", diff)
	}
}

func TestDrainWaitsForQueuedBinds(t *testing.T) {
	pods := &gatedPods{held: map[string]bool{"a-0": true}, release: make(chan struct{}), started: make(chan string, 10)}
	b := New(pods, &fakeCache{}, Options{Concurrency: 1})
	for i := range 3 {
		b.Bind(task("a", fmt.Sprintf("a-%d", i)), "n1")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go b.Run(ctx)
	<-pods.started
	if b.Drain(10 * time.Millisecond) {
		t.Fatal("Drain reported done with a bind stuck")
	}
	close(pods.release)
	if !b.Drain(10 * time.Second) {
		t.Fatal("Drain timed out after the binds could finish")
	}
	if diff := cmp.Diff([]string{"a-0->n1", "a-1->n1", "a-2->n1"}, pods.bound); diff != "" {
		t.Errorf("bound (-want,+got):\n%s", diff)
	}
}
