package framework

import (
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// Candidates filters the snapshot's nodes for a task: fits are nodes whose
// idle resources hold it and every predicate accepts; futureFits hold it
// only once releasing resources are free. fitErrs counts the rejections.
func (ssn *Session) Candidates(t *api.TaskInfo) (fits, futureFits []*api.NodeInfo, fitErrs *FitErrors) {
	fitErrs = &FitErrors{}
	if s := ssn.PrePredicate(t); s != nil {
		for range ssn.Snapshot.NodeList {
			fitErrs.Add(s)
		}
		return nil, nil, fitErrs
	}
	for _, n := range ssn.Snapshot.NodeList {
		if s := ssn.Predicate(t, n); s != nil {
			fitErrs.Add(s)
			continue
		}
		switch {
		case t.Resreq.LessEqual(n.Idle):
			fits = append(fits, n)
		case t.Resreq.LessEqual(n.FutureIdle()):
			futureFits = append(futureFits, n)
		default:
			fitErrs.Add(NewStatus("Resources", insufficient(t.Resreq, n.Idle)...))
		}
	}
	return fits, futureFits, fitErrs
}

func insufficient(req, idle *api.Resource) []string {
	names := req.Insufficient(idle)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "Insufficient " + string(n)
	}
	return out
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
