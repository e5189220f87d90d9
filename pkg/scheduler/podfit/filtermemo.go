package podfit

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// Filter results outlive the cycle for pods whose verdict on a node
// depends on nothing but the pod's signature and the node: the scheduler
// meets the same kinds of pods cycle after cycle (a backlog of copies, a
// stream of single-GPU jobs), and most nodes do not change between two
// cycles. A result is kept with the node's generation (kube-scheduler's
// NodeInfo counter, moved on by every change to the node and its pods,
// never reused, even by a node deleted and added again) and used while
// the node is at that generation.
//
// A pod qualifies when it is signed (see Signature) and
//   - no placed pod anywhere has inter-pod affinity or anti-affinity terms
//     (their terms make one node's verdict depend on the pods of others),
//     both when the result is kept and when it is used;
//   - it mounts no claim, ephemeral volume or CSI volume (whose verdicts
//     read claims, volumes, classes and CSI nodes, which change apart from
//     the nodes);
//   - its PreFilter state was not changed by AddPod or RemovePod.

// maxFilterMemos bounds the signatures kept at once; reaching it forgets
// them all.
const maxFilterMemos = 64

// filterMemos are the kept results, by signature and node name.
type filterMemos struct {
	mu    sync.Mutex
	bySig map[string]map[string]keptVerdict
	// hits counts results used, for tests.
	hits int
}

type keptVerdict struct {
	generation int64
	status     *Status
}

// filterMemoFor returns the pod's kept results, nil when the pod does not
// qualify.
func (e *Evaluator) filterMemoFor(ctx context.Context, s *PodState) map[string]keptVerdict {
	if !memoizableVolumes(s.pod) || e.lister.mayHaveAffinity() {
		return nil
	}
	var sig string
	var ok bool
	if s.sign != nil {
		sig, ok = s.sign()
	} else {
		sig, ok = e.Signature(ctx, s.pod)
	}
	if !ok {
		return nil
	}
	m := &e.filterMemos
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bySig == nil {
		m.bySig = map[string]map[string]keptVerdict{}
	}
	kept := m.bySig[sig]
	if kept == nil {
		if len(m.bySig) >= maxFilterMemos {
			clear(m.bySig)
		}
		kept = map[string]keptVerdict{}
		m.bySig[sig] = kept
	}
	return kept
}

// memoizableVolumes reports whether the pod's volumes leave its verdicts to
// the node alone.
func memoizableVolumes(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil || v.CSI != nil {
			return false
		}
	}
	return true
}

// keptFilter returns the kept verdict of the pod on the node, if any.
func (e *Evaluator) keptFilter(s *PodState, node *api.NodeInfo) (*Status, bool) {
	m := &e.filterMemos
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := s.memo[node.Name]
	if !ok || v.generation != node.K8s.Generation {
		return nil, false
	}
	m.hits++
	return v.status, true
}

// keepFilter keeps a verdict just computed. Errors and waits are not
// kept: they may pass.
func (e *Evaluator) keepFilter(s *PodState, node *api.NodeInfo, generation int64, st *Status) {
	if st != nil && (st.Code == Error || st.Code == Pending) {
		return
	}
	m := &e.filterMemos
	m.mu.Lock()
	defer m.mu.Unlock()
	s.memo[node.Name] = keptVerdict{generation: generation, status: st}
	if len(s.memo) > 2*len(e.nodes)+16 {
		// Nodes that left: start again rather than grow.
		clear(s.memo)
	}
}

// NotePlaced tells the evaluator that the pod was placed on one of the
// nodes given to SetNodes, in the cycle; Filter keeps no verdicts while a
// placed pod has inter-pod affinity terms.
func (e *Evaluator) NotePlaced(pod *corev1.Pod) { e.lister.notePlaced(pod) }

// FilterHits is how many Filter verdicts were kept ones.
func (e *Evaluator) FilterHits() int {
	e.filterMemos.mu.Lock()
	defer e.filterMemos.mu.Unlock()
	return e.filterMemos.hits
}
