package framework

import (
	"strings"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// placementMemo is what FindNode keeps of the last task of a signature:
// the nodes it could go to and their scores, each node with the version it
// was evaluated at.
type placementMemo struct {
	nodes    []*api.NodeInfo
	versions []uint64
	kept     []KeptScores
	scores   []float64
}

// setUpMemos enables FindNode's reuse when every predicate plugin signs
// tasks and every node-score plugin signs tasks and keeps scores.
func (ssn *Session) setUpMemos() {
	for _, tier := range ssn.predicate {
		for _, p := range tier {
			s, ok := p.(SignerPlugin)
			if !ok {
				ssn.signers = nil
				return
			}
			ssn.signers = append(ssn.signers, s)
		}
	}
	for _, tier := range ssn.nodeScore {
		for _, p := range tier {
			s, ok := p.(SignerPlugin)
			k, keeps := p.(ScoreKeeperPlugin)
			if !ok || !keeps {
				ssn.signers, ssn.keepers = nil, nil
				return
			}
			ssn.signers = append(ssn.signers, s)
			ssn.keepers = append(ssn.keepers, k)
		}
	}
	ssn.memos = map[string]*placementMemo{}
	ssn.noFit = map[string]noFit{}
}

// signature is the task's signature across the plugins, false when one of
// them cannot sign it.
func (ssn *Session) signature(t *api.TaskInfo) (string, bool) {
	if ssn.memos == nil {
		return "", false
	}
	var b strings.Builder
	b.WriteString(t.Resreq.String())
	for _, p := range ssn.signers {
		s, ok := p.Signature(t)
		if !ok {
			return "", false
		}
		b.WriteByte(0)
		b.WriteString(s)
	}
	return b.String(), true
}

// TaskSignature is the task's signature across the predicate and
// node-score plugins: tasks with equal signatures fit and score alike on
// every node. ok is false when a plugin cannot sign the task.
func (ssn *Session) TaskSignature(t *api.TaskInfo) (sig string, ok bool) { return ssn.signature(t) }

// StateVersion names the session's state: it moves on with every
// placement and eviction, and a discarded statement puts it back to where
// the statement began, so a result computed at one version holds whenever
// the session is at that version again.
func (ssn *Session) StateVersion() uint64 { return ssn.version }

// FindNode chooses the node for a task as Candidates and BestNode do:
// the best-scoring node that fits now, else the best that fits once
// releasing resources are free (future). fitErrs is set when no node fits.
//
// When the task has a signature and an alike task was placed earlier in
// the cycle, its candidates are reused: only the nodes that changed since
// are filtered and scored again, and those that no longer fit are dropped.
// Once none is left, the nodes are searched afresh.
func (ssn *Session) FindNode(t *api.TaskInfo) (node *api.NodeInfo, future bool, fitErrs *FitErrors) {
	if s := ssn.PrePredicate(t); s != nil {
		fitErrs = &FitErrors{}
		for range ssn.SearchNodes() {
			fitErrs.Add(s)
		}
		return nil, false, fitErrs
	}
	sig, signed := ssn.signature(t)
	sig += ssn.scopeKey()
	if signed {
		if f, ok := ssn.noFit[sig]; ok && f.mutations == ssn.mutations {
			// An alike task fitted no node, and no node changed since.
			ssn.reused++
			return nil, false, f.errs
		}
		if m := ssn.memos[sig]; m != nil {
			if n := ssn.reuse(m, t); n != nil {
				return n, false, nil
			}
			delete(ssn.memos, sig)
		}
	}
	fits, futureFits, fitErrs := ssn.scan(t, &FitErrors{})
	if signed && len(fits) == 0 && len(futureFits) == 0 {
		// The scan saw every node: alike tasks fit none either until a
		// node changes.
		if len(ssn.noFit) >= maxMemos {
			clear(ssn.noFit)
		}
		ssn.noFit[sig] = noFit{mutations: ssn.mutations, errs: fitErrs}
	}
	switch {
	case len(fits) > 1 && signed:
		m, err := ssn.memorize(t, fits)
		if err != nil {
			ssn.Logger.Error(err, "Keeping scores failed; scoring without", "task", t.Namespace+"/"+t.Name)
			return ssn.BestNode(t, fits), false, nil
		}
		if len(ssn.memos) >= maxMemos {
			clear(ssn.memos)
		}
		ssn.memos[sig] = m
		return m.best(), false, nil
	case len(fits) > 0:
		return ssn.BestNode(t, fits), false, nil
	case len(futureFits) > 0:
		return ssn.BestNode(t, futureFits), true, nil
	}
	return nil, false, fitErrs
}

// noFit remembers that a task fitted no node while the session had made
// mutations changes.
type noFit struct {
	mutations uint64
	errs      *FitErrors
}

// maxMemos bounds the signatures remembered at once: tasks rarely come in
// more kinds at a time, and each memo holds scores for many nodes.
const maxMemos = 32

// forgetMemos is told of every placement made or undone in the session
// (t's): it invalidates the remembered failures to fit, and drops every
// memo when t's pod has inter-pod affinity terms, which other pods'
// filters and scores read across nodes.
func (ssn *Session) forgetMemos(t *api.TaskInfo) {
	ssn.mutations++
	if len(ssn.memos) == 0 {
		return
	}
	if a := t.Pod.Spec.Affinity; a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil) {
		clear(ssn.memos)
	}
}

// forgetAllMemos drops every memo and remembered failure: nodes were freed
// (a placement undone), and nodes that left a memo when they filled may
// hold alike tasks again.
func (ssn *Session) forgetAllMemos() {
	ssn.mutations++
	clear(ssn.memos)
	clear(ssn.noFit)
}

func (ssn *Session) memorize(t *api.TaskInfo, fits []*api.NodeInfo) (*placementMemo, error) {
	m := &placementMemo{
		nodes:    append([]*api.NodeInfo(nil), fits...),
		versions: make([]uint64, len(fits)),
		scores:   make([]float64, len(fits)),
	}
	for i, n := range fits {
		m.versions[i] = n.Version
	}
	for _, k := range ssn.keepers {
		kept, err := k.KeepScores(t, m.nodes)
		if err != nil {
			return nil, err
		}
		m.kept = append(m.kept, kept)
	}
	return m, m.total()
}

// reuse brings the memo up to date for t and returns its best node, nil
// when no kept node fits any more or rescoring failed.
func (ssn *Session) reuse(m *placementMemo, t *api.TaskInfo) *api.NodeInfo {
	for i := len(m.nodes) - 1; i >= 0; i-- {
		n := m.nodes[i]
		if n.Version == m.versions[i] {
			continue
		}
		if !n.FitsNow(t.Resreq) || ssn.Predicate(t, n) != nil {
			m.remove(i)
			continue
		}
		m.versions[i] = n.Version
		for _, k := range m.kept {
			if err := k.Update(i, n); err != nil {
				ssn.Logger.Error(err, "Rescoring a node failed; searching afresh", "task", t.Namespace+"/"+t.Name, "node", n.Name)
				return nil
			}
		}
	}
	if len(m.nodes) == 0 {
		return nil
	}
	if err := m.total(); err != nil {
		ssn.Logger.Error(err, "Totalling kept scores failed; searching afresh", "task", t.Namespace+"/"+t.Name)
		return nil
	}
	ssn.reused++
	return m.best()
}

// Reused is how many times FindNode placed a task with an alike task's
// results.
func (ssn *Session) Reused() int { return ssn.reused }

func (m *placementMemo) remove(i int) {
	m.nodes = append(m.nodes[:i], m.nodes[i+1:]...)
	m.versions = append(m.versions[:i], m.versions[i+1:]...)
	for _, k := range m.kept {
		k.Remove(i)
	}
}

func (m *placementMemo) total() error {
	m.scores = m.scores[:len(m.nodes)]
	clear(m.scores)
	for _, k := range m.kept {
		if err := k.AddTo(m.scores); err != nil {
			return err
		}
	}
	return nil
}

// best is the highest-scoring kept node, the earliest on ties, as in
// BestNode.
func (m *placementMemo) best() *api.NodeInfo {
	best := 0
	for i := 1; i < len(m.nodes); i++ {
		if m.scores[i] > m.scores[best] {
			best = i
		}
	}
	return m.nodes[best]
}

// NodeLocalScores keeps the scores of a plugin whose score for a node
// depends on the task and that node alone.
func NodeLocalScores(p NodeScorePlugin, t *api.TaskInfo, nodes []*api.NodeInfo) KeptScores {
	k := &nodeLocalScores{p: p, t: t, s: make([]float64, len(nodes))}
	p.ScoreNodes(t, nodes, k.s)
	return k
}

type nodeLocalScores struct {
	p NodeScorePlugin
	t *api.TaskInfo
	s []float64
}

func (k *nodeLocalScores) Update(i int, n *api.NodeInfo) error {
	k.s[i] = 0
	k.p.ScoreNodes(k.t, []*api.NodeInfo{n}, k.s[i:i+1])
	return nil
}

func (k *nodeLocalScores) Remove(i int) { k.s = append(k.s[:i], k.s[i+1:]...) }

func (k *nodeLocalScores) AddTo(scores []float64) error {
	for i, v := range k.s {
		scores[i] += v
	}
	return nil
}
