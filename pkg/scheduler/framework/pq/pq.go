// Package pq is a small generic priority queue ordered by a less function.
package pq

import "container/heap"

// Queue pops the least element first.
type Queue[T any] struct {
	h *items[T]
}

// New returns an empty queue ordered by less.
func New[T any](less func(a, b T) bool) *Queue[T] {
	return &Queue[T]{h: &items[T]{less: less}}
}

// Push adds an element.
func (q *Queue[T]) Push(v T) { heap.Push(q.h, v) }

// Pop removes and returns the least element; ok is false when empty.
func (q *Queue[T]) Pop() (v T, ok bool) {
	if q.h.Len() == 0 {
		return v, false
	}
	return heap.Pop(q.h).(T), true
}

// Len is the number of elements.
func (q *Queue[T]) Len() int { return q.h.Len() }

type items[T any] struct {
	s    []T
	less func(a, b T) bool
}

func (h *items[T]) Len() int           { return len(h.s) }
func (h *items[T]) Less(i, j int) bool { return h.less(h.s[i], h.s[j]) }
func (h *items[T]) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *items[T]) Push(x any)         { h.s = append(h.s, x.(T)) }
func (h *items[T]) Pop() any {
	n := len(h.s)
	v := h.s[n-1]
	var zero T
	h.s[n-1] = zero
	h.s = h.s[:n-1]
	return v
}
