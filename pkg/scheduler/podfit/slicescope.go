package podfit

import (
	"sync"
	"sync/atomic"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
)

// The slices a pod's allocator is built over. DynamicResources' PreFilter
// builds an allocator for every pod over every ResourceSlice, indexing
// them by node, which costs a map of all nodes per pod. An alike pod is
// filtered only on the nodes whose kept verdict its signature lacks (most
// often the node the last pod went to), so its PreFilter may be given the
// slices of those nodes alone: its scope. The view lists the slices in
// scope only while the pod's PreFilter runs, on the scheduling goroutine,
// when no Filter runs. A node outside the scope that must be filtered
// after all (an action filtering with the state later) is filtered with an
// allocator over every slice (PodState.unscoped), and Reserve on such a
// node scopes the pod's allocator to that node first.

// sliceIndex is the slices (taint rules applied) at one slice epoch, with
// the pools that have slices on each node, each pool's slices, and the
// slices of the pools that have a slice of no node.
type sliceIndex struct {
	epoch  uint64
	all    []*resourcev1.ResourceSlice
	onNode map[string][]poolKey
	ofPool map[poolKey][]*resourcev1.ResourceSlice
	shared []*resourcev1.ResourceSlice
}

type poolKey struct{ driver, pool string }

// slicesView lists the tracker's slices, indexed once per slice epoch, and
// only those in scope while a scope is set.
type slicesView struct {
	tracker fwk.ResourceSliceLister
	// epoch counts the tracker's slice events.
	epoch atomic.Uint64

	mu    sync.Mutex
	index *sliceIndex
	scope sets.Set[string]
}

// ListWithDeviceTaintRules returns every slice, or, while a scope is set,
// every slice of the pools that have a slice on a node in scope (a pool is
// whole or not there, so the allocator's check that a pool is complete
// holds) and every slice of no node.
func (l *slicesView) ListWithDeviceTaintRules() ([]*resourcev1.ResourceSlice, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	x, err := l.indexLocked()
	if err != nil {
		return nil, err
	}
	if l.scope == nil {
		return x.all, nil
	}
	out := append([]*resourcev1.ResourceSlice(nil), x.shared...)
	seen := map[poolKey]bool{}
	for node := range l.scope {
		for _, p := range x.onNode[node] {
			if !seen[p] {
				seen[p] = true
				out = append(out, x.ofPool[p]...)
			}
		}
	}
	return out, nil
}

// indexLocked returns the index at the current epoch, building it when the
// epoch has moved; the epoch is read before the slices, so slices changed
// while they are listed move it again.
func (l *slicesView) indexLocked() (*sliceIndex, error) {
	epoch := l.epoch.Load()
	if l.index != nil && l.index.epoch == epoch {
		return l.index, nil
	}
	all, err := l.tracker.ListWithDeviceTaintRules()
	if err != nil {
		return nil, err
	}
	x := &sliceIndex{epoch: epoch, all: all, onNode: map[string][]poolKey{}, ofPool: map[poolKey][]*resourcev1.ResourceSlice{}}
	for _, s := range all {
		p := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		x.ofPool[p] = append(x.ofPool[p], s)
	}
	for p, slices := range x.ofPool {
		nodes := sets.New[string]()
		shared := false
		for _, s := range slices {
			if s.Spec.NodeName == nil || *s.Spec.NodeName == "" {
				shared = true
				continue
			}
			nodes.Insert(*s.Spec.NodeName)
		}
		if shared {
			// A pool with a slice of no node is listed in every scope.
			x.shared = append(x.shared, slices...)
			continue
		}
		for n := range nodes {
			x.onNode[n] = append(x.onNode[n], p)
		}
	}
	l.index = x
	return x, nil
}

// nodeLocal reports whether every slice belongs to one node.
func (l *slicesView) nodeLocal() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	x, err := l.indexLocked()
	return err == nil && len(x.shared) == 0
}

// within runs f with the slices listed limited to the scope (nil: all).
func (l *slicesView) within(scope sets.Set[string], f func()) {
	l.mu.Lock()
	l.scope = scope
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.scope = nil
		l.mu.Unlock()
	}()
	f()
}
