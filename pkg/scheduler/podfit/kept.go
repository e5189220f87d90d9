package podfit

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Filter verdicts and raw scores outlive the cycle for pods whose results
// on a node depend on nothing but the pod's signature and the node: the
// scheduler meets the same kinds of pods cycle after cycle (a backlog of
// copies, a stream of single-GPU jobs), and most nodes do not change
// between two cycles. A result is kept with the node's generation
// (kube-scheduler's NodeInfo counter, moved on by every change to the node
// and its pods, never reused, even by a node deleted and added again) and
// used while the node is at that generation.
//
// A pod qualifies when it is signed (see Signature) and
//   - no placed pod anywhere has inter-pod affinity or anti-affinity terms
//     (their terms make one node's results depend on the pods of others),
//     both when the result is kept and when it is used;
//   - it mounts no claim, ephemeral volume or CSI volume (whose verdicts
//     read claims, volumes, classes and CSI nodes, which change apart from
//     the nodes);
//   - its PreFilter state was not changed by AddPod or RemovePod.
//
// Raw scores are kept, in addition, with the score plugins PreScore left
// to run and the image index's epoch: ImageLocality scores by how many
// nodes hold an image and how many nodes there are, which change without
// the node's generation.

// maxKeptSignatures bounds the signatures kept at once; reaching it
// forgets them all.
const maxKeptSignatures = 64

// keptResults are the kept results, by signature.
type keptResults struct {
	mu    sync.Mutex
	bySig map[string]*sigResults
	// filterHits and scoreHits count results used, for tests.
	filterHits, scoreHits int
}

// sigResults are one signature's kept results.
type sigResults struct {
	nodes map[string]keptNode
	// scoredBy and scoredEpoch are what the kept scores were computed
	// with (the score plugins run and the image index's epoch);
	// scoreRound moves on when they change, which retires every kept
	// score.
	scoredBy    []string
	scoredEpoch uint64
	scoreRound  uint64
	// filteredAt is the generation of each node's kept verdict by its
	// place in the lister's list at layout (0: none), kept while DRA runs;
	// it lets a pod's device scope be found without looking nodes up by
	// name.
	filteredAt []int64
	layout     uint64
}

// keptNode is what is kept for a node: the filter verdict computed at
// generation filtered and the raw scores (in the order of the plugins
// run) computed at generation scored in round; generation 0 is none.
type keptNode struct {
	filtered int64
	status   *framework.Status
	scored   int64
	round    uint64
	raw      []int64
}

// keptFor returns the pod's kept results, nil when the pod does not
// qualify. It is looked up once per PodState.
func (e *Evaluator) keptFor(ctx context.Context, s *PodState) *sigResults {
	if s.changed || e.fresh {
		return nil
	}
	s.keptOnce.Do(func() { s.kept = e.lookUpKept(ctx, s) })
	if s.kept == nil || e.lister.mayHaveAffinity() {
		return nil
	}
	return s.kept
}

func (e *Evaluator) lookUpKept(ctx context.Context, s *PodState) *sigResults {
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
	m := &e.kept
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bySig == nil {
		m.bySig = map[string]*sigResults{}
	}
	r := m.bySig[sig]
	if r == nil {
		if len(m.bySig) >= maxKeptSignatures {
			clear(m.bySig)
		}
		r = &sigResults{nodes: map[string]keptNode{}}
		m.bySig[sig] = r
	}
	return r
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
func (e *Evaluator) keptFilter(r *sigResults, node *api.NodeInfo) (*framework.Status, bool) {
	m := &e.kept
	m.mu.Lock()
	defer m.mu.Unlock()
	v := r.nodes[node.Name]
	if v.filtered == 0 || v.filtered != nodeInfoOf(node).Generation {
		return nil, false
	}
	m.filterHits++
	return v.status, true
}

// keepFilter keeps a verdict just computed. Only a fit and the two
// unschedulable codes are kept: errors and waits may pass.
func (e *Evaluator) keepFilter(r *sigResults, node *api.NodeInfo, generation int64, st *framework.Status) {
	if st != nil && st.Code != framework.Unschedulable && st.Code != framework.UnschedulableAndUnresolvable {
		return
	}
	m := &e.kept
	m.mu.Lock()
	defer m.mu.Unlock()
	v := r.nodes[node.Name]
	v.filtered, v.status = generation, st
	e.keepNode(r, node.Name, v)
	// Only an alike pod with claims looks its scope up (deviceScope).
	if i, ok := e.lister.index[node.Name]; ok && e.draView != nil {
		if r.layout != e.lister.layout || len(r.filteredAt) != len(e.lister.nodes) {
			r.filteredAt, r.layout = make([]int64, len(e.lister.nodes)), e.lister.layout
		}
		r.filteredAt[i] = generation
	}
}

// keepNode stores a node's entry; the caller holds the lock.
func (e *Evaluator) keepNode(r *sigResults, name string, v keptNode) {
	r.nodes[name] = v
	if len(r.nodes) > 2*len(e.nodes)+16 {
		// Nodes that left: start again rather than grow.
		clear(r.nodes)
		r.filteredAt = nil
	}
}

// scoresKeptBy readies the kept scores for the score plugins a PreScore
// left to run (raw scores depend on them and on the image index's epoch,
// besides the pod and the node), retiring them when they were computed
// with others.
func (e *Evaluator) scoresKeptBy(r *sigResults, plugins []string) {
	m := &e.kept
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.scoredEpoch != e.images.epoch || !slices.Equal(r.scoredBy, plugins) {
		r.scoredBy, r.scoredEpoch = slices.Clone(plugins), e.images.epoch
		r.scoreRound++
	}
}

// keptScore returns the kept raw scores of the pod on the node, if any.
// Callers must not change them.
func (e *Evaluator) keptScore(r *sigResults, node *api.NodeInfo) ([]int64, bool) {
	m := &e.kept
	m.mu.Lock()
	defer m.mu.Unlock()
	v := r.nodes[node.Name]
	if v.scored == 0 || v.scored != nodeInfoOf(node).Generation || v.round != r.scoreRound {
		return nil, false
	}
	m.scoreHits++
	return v.raw, true
}

// keepScore keeps raw scores just computed.
func (e *Evaluator) keepScore(r *sigResults, node *api.NodeInfo, generation int64, raw []int64) {
	m := &e.kept
	m.mu.Lock()
	defer m.mu.Unlock()
	v := r.nodes[node.Name]
	v.scored, v.round, v.raw = generation, r.scoreRound, raw
	e.keepNode(r, node.Name, v)
}

// NotePlaced tells the evaluator that the pod was placed on one of the
// nodes given to SetNodes, in the cycle; no kept result is used while a
// placed pod has inter-pod affinity terms.
func (e *Evaluator) NotePlaced(pod *corev1.Pod) { e.lister.notePlaced(pod) }

// KeptHits is how many Filter verdicts and how many nodes' raw scores were
// kept ones.
func (e *Evaluator) KeptHits() (filters, scores int) {
	e.kept.mu.Lock()
	defer e.kept.mu.Unlock()
	return e.kept.filterHits, e.kept.scoreHits
}
