package framework

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// PodFit runs kube-scheduler's pod-level plugins (filters, scores, volume
// reservation and binding) over the cycle's nodes, so that a pod's
// constraints mean what they mean to kube-scheduler. The scheduler's binary
// builds it (package podfit) and hands it to plugin factories in the
// Handle; the predicates and nodeorder plugins use it.
//
// A cycle calls SetNodes once, then for each pod it tries to place
// PreFilter, Filter on candidate nodes, Score, and Reserve on the chosen
// node; the binder later calls PreBind, or Unreserve when the gang is
// discarded. Filter may run concurrently for different nodes; the other
// methods must not run concurrently with each other or with changes to the
// nodes.
type PodFit interface {
	// SetNodes gives the cycle's nodes. The plugins read them in place:
	// placements made on them afterwards are seen by the next PreFilter.
	SetNodes(nodes []*api.NodeInfo)
	// Release lets go of the nodes SetNodes gave, when the cycle ends: they
	// hold the pods and nodes as they were in the cycle, which the cluster
	// replaces. Nothing but SetNodes may be called until the next cycle,
	// but for PreBind and Unreserve, which read only a pod's state.
	Release()
	// PreFilter computes the pod's state against the current nodes; a
	// non-nil status means the pod fits no node. sign, when not nil, gives
	// the pod's signature as the caller computes it (see Signature), so
	// that it is not computed again.
	PreFilter(ctx context.Context, pod *corev1.Pod, sign func() (string, bool)) (PodFitState, *Status)
	// Signature returns a string equal for pods the plugins cannot tell
	// apart; false when the pod cannot be signed.
	Signature(ctx context.Context, pod *corev1.Pod) (string, bool)
	// Filter reports whether the pod fits the node: nil when it does.
	Filter(ctx context.Context, s PodFitState, node *api.NodeInfo) *Status
	// FilterWithout reports whether the pod would fit the node if the
	// victims (pods on the node) were gone.
	FilterWithout(ctx context.Context, s PodFitState, node *api.NodeInfo, victims []*corev1.Pod) *Status
	// Score returns the pod's weighted, normalised total on each node.
	Score(ctx context.Context, s PodFitState, nodes []*api.NodeInfo) ([]int64, error)
	// KeepScores scores the nodes and keeps the raw scores, so that
	// changed nodes are rescored alone.
	KeepScores(ctx context.Context, s PodFitState, nodes []*api.NodeInfo) (PodFitScores, error)
	// NotePlaced tells the evaluator a pod was placed in the cycle.
	NotePlaced(pod *corev1.Pod)
	// Reserve tells the plugins the pod goes to the node.
	Reserve(ctx context.Context, s PodFitState, nodeName string) *Status
	// Unreserve undoes Reserve; it does nothing for a pod not reserved.
	Unreserve(ctx context.Context, s PodFitState)
	// PreBind does what must happen before the pod is bound to the node it
	// was reserved on (binding its volumes). It blocks: run it on the
	// binder's goroutines.
	PreBind(ctx context.Context, s PodFitState, nodeName string) *Status
}

// PodFitState is one pod's state within a cycle, as PodFit.PreFilter
// computed it.
type PodFitState interface {
	// Allows reports whether PreFilter left the node as a candidate.
	Allows(nodeName string) bool
}

// PodFitScores are a pod's raw scores on a list of nodes, kept so that a
// node that changed is rescored alone.
type PodFitScores interface {
	// Update rescores the i-th node, which changed.
	Update(ctx context.Context, i int, node *api.NodeInfo) error
	// Remove drops the i-th node from the totals.
	Remove(i int)
	// Totals appends to out each node's weighted, normalised total.
	Totals(ctx context.Context, out []int64) ([]int64, error)
}
