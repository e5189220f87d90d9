package job

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// expectations remember, per Job, the writes the controller made that its
// cache has yet to show: the Job's status (by the resource version it was
// written over) and the pods it created. A reconcile that would read a
// cache behind its own writes waits for the watch instead: acting on it
// would create pods that exist (a refused create each) and write status
// over a stale version (a conflict each). Expectations live in memory; a
// restarted controller starts without them and acts as it would have.
type expectations struct {
	mu   sync.Mutex
	jobs map[types.UID]*expectation
	// timeout bounds a wait, should a watch event be lost.
	timeout time.Duration
}

type expectation struct {
	// staleVersions are the Job's resource versions the controller wrote
	// its status over, while the cache shows one of them.
	staleVersions sets.Set[string]
	// pods are the names of pods created and not yet seen.
	pods sets.Set[string]
	// since is when the latest unseen write was made.
	since time.Time
}

func newExpectations(timeout time.Duration) *expectations {
	return &expectations{jobs: map[types.UID]*expectation{}, timeout: timeout}
}

// entry returns the Job's expectation, its wait restarted. A new entry
// first drops those given up on (of Jobs deleted meanwhile, say).
func (e *expectations) entry(uid types.UID, now time.Time) *expectation {
	x := e.jobs[uid]
	if x == nil {
		for id, old := range e.jobs {
			if now.Sub(old.since) >= e.timeout {
				delete(e.jobs, id)
			}
		}
		x = &expectation{staleVersions: sets.New[string](), pods: sets.New[string]()}
		e.jobs[uid] = x
	}
	x.since = now
	return x
}

// statusWritten records that the Job's status was written over version.
func (e *expectations) statusWritten(uid types.UID, version string, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(uid, now).staleVersions.Insert(version)
}

// podsCreated records pods created for the Job (or found to exist).
func (e *expectations) podsCreated(uid types.UID, names []string, now time.Time) {
	if len(names) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(uid, now).pods.Insert(names...)
}

// satisfied reports whether the cache shows every write made for the Job:
// its resource version moved past the one written over, and every pod
// created is listed. What the cache shows is forgotten; a wait longer than
// the timeout is given up.
func (e *expectations) satisfied(uid types.UID, version string, pods []*corev1.Pod, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.jobs[uid]
	if x == nil {
		return true
	}
	if !x.staleVersions.Has(version) {
		x.staleVersions.Clear()
	}
	for _, p := range pods {
		x.pods.Delete(p.Name)
	}
	if (x.staleVersions.Len() == 0 && x.pods.Len() == 0) || now.Sub(x.since) >= e.timeout {
		delete(e.jobs, uid)
		return true
	}
	return false
}
