package binder

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

type fakePods struct {
	mu    sync.Mutex
	fail  map[string]bool
	bound []string
}

func (f *fakePods) Bind(_ context.Context, b *corev1.Binding) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail[b.Name] {
		return errors.New("conflict")
	}
	f.bound = append(f.bound, b.Name+"->"+b.Target.Name)
	return nil
}

type fakeCache struct {
	mu              sync.Mutex
	assumed, forgot []string
}

func (f *fakeCache) Assume(t *api.TaskInfo, node string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.assumed = append(f.assumed, t.Name)
}

func (f *fakeCache) Forget(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgot = append(f.forgot, string(uid))
}

func task(job, name string) *api.TaskInfo {
	return &api.TaskInfo{UID: types.UID(name), Name: name, Namespace: "ns", Job: api.JobID("ns/" + job)}
}

func TestFailedBindDropsTheRestOfTheGang(t *testing.T) {
	pods := &fakePods{fail: map[string]bool{"a-2": true}}
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
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	b.Wait()
	cancel()
	<-done

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
	ctx, cancel = context.WithCancel(t.Context())
	done = make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	b.Wait()
	cancel()
	<-done
	if got := pods.bound[len(pods.bound)-1]; got != "a-2->n1" {
		t.Errorf("retry: last bound %q, want a-2->n1", got)
	}
}
