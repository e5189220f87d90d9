package agent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/agent/usage"
)

// usageReporter publishes the node's NodeUsage: the averages of the
// agent's readings over a window, every interval. After a start it waits
// until its readings cover the interval (or the whole window, when that is
// shorter), so that a restart never publishes an average of one reading.
// It remembers the object it last wrote and, after a start or a failed
// write, reads it back first.
type usageReporter struct {
	client   client.Client
	window   usage.Window
	interval time.Duration

	// last is when it last wrote; zero: not since the start.
	last time.Time
	// written is the object as last written or read; nil: read it first.
	written *metricsv1alpha1.NodeUsage
}

// ReportUsage makes the agent publish its node's NodeUsage every interval,
// averaged over window. Call it before Start.
func (a *Agent) ReportUsage(c client.Client, window, interval time.Duration) {
	a.usageReport = &usageReporter{client: c, window: usage.Window{Length: window}, interval: interval}
}

// due reports whether a report is due at now.
func (r *usageReporter) due(now time.Time) bool {
	if !r.last.IsZero() && now.Sub(r.last) < r.interval {
		return false
	}
	return r.window.Covered() >= min(r.window.Length, r.interval)
}

// report writes the window's averages when a report is due.
func (r *usageReporter) report(ctx context.Context, node *corev1.Node, now time.Time) error {
	if !r.due(now) {
		return nil
	}
	rep, ok := r.window.Report()
	if !ok {
		return nil
	}
	if r.written == nil {
		var cur metricsv1alpha1.NodeUsage
		switch err := r.client.Get(ctx, client.ObjectKey{Name: node.Name}, &cur); {
		case apierrors.IsNotFound(err):
			nu := &metricsv1alpha1.NodeUsage{ObjectMeta: metav1.ObjectMeta{
				Name:            node.Name,
				OwnerReferences: []metav1.OwnerReference{nodeOwner(node)},
			}}
			fill(nu, rep)
			if err := r.client.Create(ctx, nu); err != nil {
				return fmt.Errorf("creating NodeUsage %s: %w", node.Name, err)
			}
			r.written, r.last = nu, now
			return nil
		case err != nil:
			return fmt.Errorf("reading NodeUsage %s: %w", node.Name, err)
		}
		r.written = &cur
	}
	nu := r.written.DeepCopy()
	nu.OwnerReferences = []metav1.OwnerReference{nodeOwner(node)}
	fill(nu, rep)
	if err := r.client.Update(ctx, nu); err != nil {
		r.written = nil
		return fmt.Errorf("updating NodeUsage %s: %w", node.Name, err)
	}
	r.written, r.last = nu, now
	return nil
}

// nodeOwner makes the node the owner of its usage: deleting the node
// deletes it.
func nodeOwner(node *corev1.Node) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
}

func fill(nu *metricsv1alpha1.NodeUsage, rep usage.Report) {
	nu.Timestamp = metav1.NewTime(rep.At.UTC().Truncate(time.Second))
	// Readings drift by a few milliseconds from the interval: a tenth of a
	// second says what the window covers without the noise.
	nu.Window = metav1.Duration{Duration: rep.Window.Round(100 * time.Millisecond)}
	nu.Usage = resourceList(rep.Node)
	nu.Pods = make([]metricsv1alpha1.PodUsage, 0, len(rep.Pods))
	for _, p := range rep.Pods {
		nu.Pods = append(nu.Pods, metricsv1alpha1.PodUsage{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Usage: resourceList(p.Use)})
	}
}

func resourceList(a usage.Amounts) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(a.CPU, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(a.Memory, resource.BinarySI),
	}
}
