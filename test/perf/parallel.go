package perf

import (
	"context"
	"sync"
)

// forEach calls fn for every item with at most workers calls in flight, and
// stops handing out items at the first error, which it returns.
func forEach[T any](ctx context.Context, items []T, workers int, fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan T)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for item := range work {
				if err := fn(ctx, item); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for _, item := range items {
		select {
		case work <- item:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return context.Cause(ctx)
}
