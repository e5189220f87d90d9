package framework

import (
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// Candidates filters the snapshot's nodes for a task: fits are nodes whose
// idle resources hold it and every predicate accepts; futureFits hold it
// only once releasing resources are free. fitErrs counts the rejections
// when no node fits now (it is incomplete otherwise): a node short of
// resources is counted as such, whatever the predicates would say.
// With node sampling, filtering stops once enough nodes fit, and the next
// search starts where this one stopped.
// The returned slices are reused: they are valid until the next call.
func (ssn *Session) Candidates(t *api.TaskInfo) (fits, futureFits []*api.NodeInfo, fitErrs *FitErrors) {
	fitErrs = &FitErrors{}
	if s := ssn.PrePredicate(t); s != nil {
		for range ssn.SearchNodes() {
			fitErrs.Add(s)
		}
		return nil, nil, fitErrs
	}
	return ssn.scan(t, fitErrs)
}

// scan is Candidates after PrePredicate.
func (ssn *Session) scan(t *api.TaskInfo, fitErrs *FitErrors) (fits, futureFits []*api.NodeInfo, _ *FitErrors) {
	fits, futureFits = ssn.fitsBuf[:0], ssn.futureBuf[:0]
	short := ssn.shortBuf[:0]
	defer func() {
		clear(short)
		ssn.fitsBuf, ssn.futureBuf, ssn.shortBuf = fits, futureFits, short[:0]
	}()
	nodes := ssn.SearchNodes()
	total := len(nodes)
	enough := total
	if ssn.nodesToFind != nil {
		enough = ssn.nodesToFind(total)
	}
	start := 0
	if total > 0 {
		start = ssn.nextStart % total
	}
	processed := 0
	defer func() {
		if total > 0 {
			ssn.nextStart = (start + processed) % total
		}
	}()
	// consider files a node among the fits, the future fits, the nodes
	// short of room or the rejections.
	consider := func(n *api.NodeInfo) {
		// Resources first, as Volcano checks them: a node without room
		// for the task even once its releasing tasks are gone is passed
		// over without running the predicates, and reported short of
		// resources (below, and only when no node fits: callers read the
		// reasons only then).
		if !n.FitsFuture(t.Resreq) {
			short = append(short, n)
			return
		}
		if s := ssn.Predicate(t, n); s != nil {
			fitErrs.Add(s)
			return
		}
		if n.FitsNow(t.Resreq) {
			fits = append(fits, n)
		} else {
			futureFits = append(futureFits, n)
		}
	}
	// Nodes outside a soft shard are tried only when no node of the
	// shard fits.
	secondary := ssn.secondaryBuf[:0]
	defer func() { clear(secondary); ssn.secondaryBuf = secondary[:0] }()
	for i := range total {
		if len(fits) >= enough {
			break
		}
		n := nodes[(start+i)%total]
		processed++
		switch {
		case n.Fenced:
			fitErrs.Add(fencedStatus)
		case n.Secondary:
			secondary = append(secondary, n)
		default:
			consider(n)
		}
	}
	if len(fits) == 0 {
		for _, n := range secondary {
			if len(fits) >= enough {
				break
			}
			consider(n)
		}
	}
	if len(fits) == 0 {
		for _, n := range short {
			fitErrs.Add(ssn.insufficient(t.Resreq, n))
		}
	}
	return fits, futureFits, fitErrs
}

// insufficient is the status of a node without room for req even once its
// releasing tasks are gone: the resources it is short of then, with one
// shared status per set of missing resources.
func (ssn *Session) insufficient(req *api.Resource, n *api.NodeInfo) *Status {
	ssn.shortNames = n.AppendShortOf(ssn.shortNames[:0], req)
	names := ssn.shortNames
	ssn.shortKey = ssn.shortKey[:0]
	for _, n := range names {
		ssn.shortKey = append(append(ssn.shortKey, n...), ',')
	}
	if s, ok := ssn.resourceStatus[string(ssn.shortKey)]; ok {
		return s
	}
	key := string(ssn.shortKey)
	reasons := make([]string, len(names))
	for i, n := range names {
		reasons[i] = "Insufficient " + string(n)
	}
	s := NewStatus("Resources", reasons...)
	ssn.resourceStatus[key] = s
	return s
}

// BestNode returns the highest-scoring node; ties go to the earliest node in
// the list, so that equal inputs give equal decisions.
func (ssn *Session) BestNode(t *api.TaskInfo, nodes []*api.NodeInfo) *api.NodeInfo {
	switch len(nodes) {
	case 0:
		return nil
	case 1:
		return nodes[0]
	}
	if !ssn.HasScorers() {
		return nodes[0]
	}
	scores := ssn.ScoreNodes(t, nodes)
	best := 0
	for i := 1; i < len(nodes); i++ {
		if scores[i] > scores[best] {
			best = i
		}
	}
	return nodes[best]
}

// NodesToFind returns kube-scheduler's rule for how many feasible nodes are
// enough: max(minNodes, percentage% of the nodes), where percentage 0 is
// adaptive (50% less 1% per 125 nodes, at least 5%); every node of a
// cluster smaller than minNodes.
func NodesToFind(percentage, minNodes int) func(int) int {
	return func(total int) int {
		if total <= minNodes || percentage >= 100 {
			return total
		}
		p := percentage
		if p <= 0 {
			p = max(50-total/125, 5)
		}
		return max(total*p/100, minNodes)
	}
}

// CandidateNodes returns how many nodes where evictions would make room
// preemption and reclaim look for before choosing the best:
// percentage% of the nodes, at least minNodes and at most maxNodes, and
// never more than there are.
func CandidateNodes(percentage, minNodes, maxNodes int) func(nodes int) int {
	return func(total int) int {
		n := min(max(total*percentage/100, minNodes), maxNodes)
		return max(1, min(n, total))
	}
}
