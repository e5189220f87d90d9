package controlplane

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KwokTaint is the taint fake nodes carry when NodeSpec.Tainted is set, so
// that only pods that tolerate it land there.
var KwokTaint = corev1.Taint{Key: KwokNodeAnnotation, Value: "fake", Effect: corev1.TaintEffectNoSchedule}

// NodeSpec describes a simulated node.
type NodeSpec struct {
	Name     string
	Labels   map[string]string
	Capacity corev1.ResourceList
	// Tainted adds KwokTaint.
	Tainted bool
	Taints  []corev1.Taint
	// Annotations are added to kwok's, such as a device plugin's
	// registration.
	Annotations map[string]string
}

// Node returns the Node object for the spec, annotated for kwok.
func (s NodeSpec) Node() *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname:   s.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
		"type":                 "kwok",
	}
	for k, v := range s.Labels {
		labels[k] = v
	}
	taints := append([]corev1.Taint(nil), s.Taints...)
	if s.Tainted {
		taints = append(taints, KwokTaint)
	}
	capacity := s.Capacity.DeepCopy()
	if _, ok := capacity[corev1.ResourcePods]; !ok {
		if capacity == nil {
			capacity = corev1.ResourceList{}
		}
		capacity[corev1.ResourcePods] = resource.MustParse("110")
	}
	annotations := map[string]string{KwokNodeAnnotation: "fake"}
	for k, v := range s.Annotations {
		annotations[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        s.Name,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
		},
	}
}

// CreateNodes creates the nodes (status included) and waits until kwok has
// made all of them Ready.
func CreateNodes(ctx context.Context, c client.Client, specs []NodeSpec) error {
	for _, s := range specs {
		n := s.Node()
		status := n.Status
		if err := c.Create(ctx, n); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", s.Name, err)
		}
		// Status is ignored on create; capacity is set through the
		// subresource. kwok may have written the status meanwhile: retry on
		// the latest object.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur corev1.Node
			if err := c.Get(ctx, client.ObjectKey{Name: s.Name}, &cur); err != nil {
				return err
			}
			cur.Status.Capacity = status.Capacity
			cur.Status.Allocatable = status.Allocatable
			return c.Status().Update(ctx, &cur)
		})
		if err != nil {
			return fmt.Errorf("setting capacity of node %s: %w", s.Name, err)
		}
	}
	return WaitNodesReady(ctx, c, specs)
}

// WaitNodesReady waits until every named node reports Ready.
func WaitNodesReady(ctx context.Context, c client.Client, specs []NodeSpec) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var nodes corev1.NodeList
		ready := map[string]bool{}
		if err := c.List(ctx, &nodes); err == nil {
			for i := range nodes.Items {
				ready[nodes.Items[i].Name] = nodeReady(&nodes.Items[i])
			}
		}
		pending, firstPending := 0, ""
		for _, s := range specs {
			if !ready[s.Name] {
				if pending == 0 {
					firstPending = s.Name
				}
				pending++
			}
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d nodes not Ready (first: %s): %w", pending, len(specs), firstPending, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
