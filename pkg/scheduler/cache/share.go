package cache

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// maxShared bounds each table of a Sharer: past it, new values are kept as
// they came, so that a cluster of many distinct shapes costs the table a
// bounded amount and nothing more.
const maxShared = 4096

// A Sharer makes objects decoded one by one share the parts that are equal
// across many of them: the requests and limits of pods made from one
// template, their tolerations (the same two defaults on almost every pod),
// the capacity and allocatable of nodes of one shape. An informer keeps one
// copy of each instead of one per object.
//
// The shared parts must only be read, as everything an informer hands out
// must; a copy (DeepCopy) owns its parts again. A Sharer is safe for
// concurrent use: the informers of several types call it.
type Sharer struct {
	mu          sync.Mutex
	lists       map[string]corev1.ResourceList
	tolerations map[string][]corev1.Toleration
}

// NewSharer returns an empty Sharer.
func NewSharer() *Sharer {
	return &Sharer{lists: map[string]corev1.ResourceList{}, tolerations: map[string][]corev1.Toleration{}}
}

// SharePod makes the pod's resource lists and tolerations the shared copies
// of equal ones.
func (s *Sharer) SharePod(pod *corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			r := &cs[i].Resources
			r.Requests = s.listLocked(r.Requests)
			r.Limits = s.listLocked(r.Limits)
		}
	}
	pod.Spec.Overhead = s.listLocked(pod.Spec.Overhead)
	pod.Spec.Tolerations = s.tolerationsLocked(pod.Spec.Tolerations)
}

// ShareNode makes the node's capacity and allocatable the shared copies of
// equal ones.
func (s *Sharer) ShareNode(node *corev1.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	node.Status.Capacity = s.listLocked(node.Status.Capacity)
	node.Status.Allocatable = s.listLocked(node.Status.Allocatable)
}

func (s *Sharer) listLocked(rl corev1.ResourceList) corev1.ResourceList {
	if len(rl) == 0 {
		return rl
	}
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(rl)) {
		q := rl[name]
		b.WriteString(string(name))
		b.WriteByte('=')
		b.WriteString(q.String())
		b.WriteByte(';')
	}
	return shared(s.lists, b.String(), rl)
}

func (s *Sharer) tolerationsLocked(ts []corev1.Toleration) []corev1.Toleration {
	if len(ts) == 0 {
		return ts
	}
	var b strings.Builder
	for _, t := range ts {
		for _, f := range []string{t.Key, string(t.Operator), t.Value, string(t.Effect)} {
			b.WriteString(strconv.Quote(f))
		}
		if t.TolerationSeconds != nil {
			b.WriteString(strconv.FormatInt(*t.TolerationSeconds, 10))
		}
		b.WriteByte(';')
	}
	return shared(s.tolerations, b.String(), ts)
}

// shared returns the value kept for key, keeping v for it when there is
// none yet and the table has room.
func shared[V any](table map[string]V, key string, v V) V {
	if kept, ok := table[key]; ok {
		return kept
	}
	if len(table) < maxShared {
		table[key] = v
	}
	return v
}
