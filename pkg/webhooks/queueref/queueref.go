// Package queueref checks references to a Queue from the objects that submit
// work to it: a Job's spec.queue, a PodGroup's spec.queue and a pod's
// scheduling.volcano.sh/queue-name annotation (directly or through its
// PodGroup). As in Volcano, work goes only to a queue that exists, is open,
// is not the root queue and has no child queues.
package queueref

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// maxListed bounds the queue names a message lists.
const maxListed = 20

// Problem returns why work cannot be submitted to the queue named name, as a
// sentence that starts with "queue" (or "the root queue") and does not repeat
// the name, or "" when it can. It returns an error only when the queues
// could not be read.
//
// A queue whose status.state is not set yet counts as open, as it does for
// the scheduler: the queue controller fills the state in after creation.
func Problem(ctx context.Context, c client.Reader, name string) (string, error) {
	if name == schedulingv1beta1.RootQueue {
		return "the root queue stands for the whole cluster and cannot hold work; submit to a leaf queue", nil
	}
	var queue schedulingv1beta1.Queue
	err := c.Get(ctx, client.ObjectKey{Name: name}, &queue)
	if apierrors.IsNotFound(err) {
		names, err := Names(ctx, c)
		if err != nil {
			return "", err
		}
		return "queue does not exist; existing queues: " + List(names), nil
	}
	if err != nil {
		return "", fmt.Errorf("reading queue %s: %w", name, err)
	}
	if s := queue.Status.State; s != "" && s != schedulingv1beta1.QueueStateOpen {
		return fmt.Sprintf("queue is %s: it accepts no new work until it is opened", s), nil
	}
	children, err := Children(ctx, c, name)
	if err != nil {
		return "", err
	}
	if len(children) > 0 {
		return fmt.Sprintf("queue has child queues (%s): work runs in leaf queues only", List(children)), nil
	}
	return "", nil
}

// Names returns the names of the queues work may name, sorted: every queue
// but root.
func Names(ctx context.Context, c client.Reader) ([]string, error) {
	var list schedulingv1beta1.QueueList
	if err := c.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing queues: %w", err)
	}
	var names []string
	for _, q := range list.Items {
		if q.Name != schedulingv1beta1.RootQueue {
			names = append(names, q.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// Children returns, sorted, the names of the queues whose parent is name. A
// queue without spec.parent is a child of root.
func Children(ctx context.Context, c client.Reader, name string) ([]string, error) {
	var list schedulingv1beta1.QueueList
	if err := c.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing queues: %w", err)
	}
	var children []string
	for _, q := range list.Items {
		if Parent(&q) == name {
			children = append(children, q.Name)
		}
	}
	slices.Sort(children)
	return children, nil
}

// Parent returns the parent of a queue as defaulting sets it: root for any
// queue without one, nothing for root itself.
func Parent(q *schedulingv1beta1.Queue) string {
	if q.Name == schedulingv1beta1.RootQueue {
		return ""
	}
	if q.Spec.Parent == "" {
		return schedulingv1beta1.RootQueue
	}
	return q.Spec.Parent
}

// List joins names for a message, cutting long lists short.
func List(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
}
