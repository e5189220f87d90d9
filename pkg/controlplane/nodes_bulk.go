package controlplane

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateNodesBulk is CreateNodes for thousands of nodes: workers create
// requests in flight, one request per node, then one wait until kwok has made
// every node Ready. A Node's status, unlike most objects', is kept on create
// (kubelets register that way), so no status update follows; kwok's first
// status write keeps the capacity it finds.
func CreateNodesBulk(ctx context.Context, c client.Client, specs []NodeSpec, workers int) error {
	if workers < 1 {
		workers = 1
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan NodeSpec)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for s := range work {
				if err := c.Create(ctx, s.Node()); err != nil && !apierrors.IsAlreadyExists(err) {
					cancel(fmt.Errorf("creating node %s: %w", s.Name, err))
				}
			}
		})
	}
feed:
	for _, s := range specs {
		select {
		case work <- s:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return waitNodesReadyEvery(ctx, c, specs, time.Second)
}

// waitNodesReadyEvery is WaitNodesReady polling at the given interval: a list
// of thousands of nodes is too heavy to repeat ten times a second.
func waitNodesReadyEvery(ctx context.Context, c client.Client, specs []NodeSpec, every time.Duration) error {
	want := make(map[string]bool, len(specs))
	for _, s := range specs {
		want[s.Name] = true
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		var nodes corev1.NodeList
		ready := 0
		if err := c.List(ctx, &nodes); err == nil {
			for i := range nodes.Items {
				if want[nodes.Items[i].Name] && nodeReady(&nodes.Items[i]) {
					ready++
				}
			}
		}
		if ready == len(want) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d nodes not Ready: %w", len(want)-ready, len(want), context.Cause(ctx))
		case <-tick.C:
		}
	}
}
