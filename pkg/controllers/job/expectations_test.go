package job

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pods(names ...string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, n := range names {
		out = append(out, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return out
}

func TestExpectations(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type step struct {
		written  string   // a status write over this version
		created  []string // pods created
		version  string   // the cache's version of the Job
		cached   []string // the cache's pods
		after    time.Duration
		wantSeen bool
	}
	cases := map[string][]step{
		"nothing written": {{version: "1", wantSeen: true}},
		"a status write waits for a new version": {
			{written: "1"},
			{version: "1", wantSeen: false},
			{version: "2", wantSeen: true},
			{version: "1", wantSeen: true}, // forgotten once seen
		},
		"two writes in one reconcile: neither old version will do": {
			{written: "1"}, {written: "2"},
			{version: "1", wantSeen: false},
			{version: "2", wantSeen: false},
			{version: "3", wantSeen: true},
		},
		"created pods wait to be listed": {
			{created: []string{"a", "b"}},
			{version: "1", cached: []string{"a"}, wantSeen: false},
			{version: "1", cached: []string{"b"}, wantSeen: true},
		},
		"a lost event is given up on after the timeout": {
			{created: []string{"a"}},
			{version: "1", after: 14 * time.Second, wantSeen: false},
			{version: "1", after: 15 * time.Second, wantSeen: true},
		},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			e := newExpectations(15 * time.Second)
			for i, s := range steps {
				now := t0.Add(s.after)
				switch {
				case s.written != "":
					e.statusWritten("uid", s.written, now)
				case s.created != nil:
					e.podsCreated("uid", s.created, now)
				default:
					if got := e.satisfied("uid", s.version, pods(s.cached...), now); got != s.wantSeen {
						t.Errorf("step %d: satisfied = %v, want %v", i, got, s.wantSeen)
					}
				}
			}
		})
	}
}
