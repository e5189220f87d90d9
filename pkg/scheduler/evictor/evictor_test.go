package evictor

import (
	"context"
	"errors"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// fakeEvictor answers each pod by name, and can hold an eviction until
// released.
type fakeEvictor struct {
	answers map[string]error
	hold    chan struct{}
	mu      sync.Mutex
	calls   map[string]int
	uids    map[string]string
}

func (f *fakeEvictor) Evict(_ context.Context, e *policyv1.Eviction) error {
	if f.hold != nil {
		<-f.hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[e.Name]++
	f.uids[e.Name] = string(*e.DeleteOptions.Preconditions.UID)
	return f.answers[e.Name]
}

func task(name string) *api.TaskInfo {
	return api.NewTaskInfo(st.MakePod("ns", name).Node("n").Phase(corev1.PodRunning).Obj(), api.NewJobID("ns", name))
}

func TestResults(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	f := &fakeEvictor{calls: map[string]int{}, uids: map[string]string{}, answers: map[string]error{
		"gone":     apierrors.NewNotFound(gr, "gone"),
		"replaced": apierrors.NewConflict(gr, "replaced", errors.New("uid precondition failed")),
		"budget":   apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0),
		"broken":   apierrors.NewInternalError(errors.New("etcd")),
	}}
	var mu sync.Mutex
	got := map[string]error{}
	e := New(f, Options{Concurrency: 2, OnResult: func(r Result) {
		mu.Lock()
		got[r.Task.Name] = r.Err
		mu.Unlock()
	}})
	go e.Run(t.Context())
	for _, n := range []string{"ok", "gone", "replaced", "budget", "broken"} {
		e.Evict(task(n), "preempted")
	}
	e.Wait()
	for _, n := range []string{"ok", "gone", "replaced"} {
		if got[n] != nil {
			t.Errorf("%s: %v, want evicted", n, got[n])
		}
	}
	if !errors.Is(got["budget"], ErrDisruptionBudget) {
		t.Errorf("budget: %v, want ErrDisruptionBudget", got["budget"])
	}
	if got["broken"] == nil || errors.Is(got["broken"], ErrDisruptionBudget) {
		t.Errorf("broken: %v, want the API error", got["broken"])
	}
	if f.uids["ok"] != string(task("ok").UID) {
		t.Errorf("eviction of ok had UID precondition %q, want %q", f.uids["ok"], task("ok").UID)
	}
}

func TestAPodIsEvictedOnceAtATime(t *testing.T) {
	f := &fakeEvictor{calls: map[string]int{}, uids: map[string]string{}, hold: make(chan struct{})}
	e := New(f, Options{Concurrency: 4})
	go e.Run(t.Context())
	for range 3 {
		e.Evict(task("p"), "preempted")
	}
	close(f.hold)
	e.Wait()
	if f.calls["p"] != 1 {
		t.Errorf("%d evictions of p while one was in flight, want 1", f.calls["p"])
	}
	e.Evict(task("p"), "again")
	e.Wait()
	if f.calls["p"] != 2 {
		t.Errorf("%d evictions of p after the first ended, want 2", f.calls["p"])
	}
}
