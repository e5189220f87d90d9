package scheduler

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Explanation is what the scheduler last concluded about a job that is not
// (fully) placed: the same blockers its PodGroup's Unschedulable condition
// sums up, one by one.
type Explanation struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Queue     string    `json:"queue"`
	Phase     string    `json:"phase"`
	Blockers  []Blocker `json:"blockers"`
	// Cycle is when the cycle that concluded it started.
	Cycle time.Time `json:"cycle"`
}

// Blocker is one thing that keeps a job from being placed.
type Blocker struct {
	Type    string `json:"type"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// explanations keeps the latest explanation of every job that has one.
type explanations struct {
	mu   sync.Mutex
	jobs map[api.JobID]Explanation
}

// record takes a cycle's outcomes: jobs with blockers get a new
// explanation; jobs that are placed or gone lose theirs.
func (e *explanations) record(snap *api.Snapshot, outcomes map[api.JobID]*framework.JobOutcome, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.jobs == nil {
		e.jobs = map[api.JobID]Explanation{}
	}
	for id := range e.jobs {
		j := snap.Jobs[id]
		if j == nil || (framework.Admitted(j) && j.PendingCount() == 0 && j.CountIn(api.Pipelined) == 0) {
			delete(e.jobs, id)
		}
	}
	for id, o := range outcomes {
		j := snap.Jobs[id]
		if j == nil {
			continue
		}
		if len(o.Blockers) == 0 {
			delete(e.jobs, id)
			continue
		}
		x := Explanation{Namespace: j.Namespace, Name: j.Name, Queue: string(j.Queue), Phase: string(framework.JobPhase(j)), Cycle: at}
		for _, b := range o.Blockers {
			x.Blockers = append(x.Blockers, Blocker{Type: b.Type, Kind: b.Kind.String(), Message: b.Message})
		}
		e.jobs[id] = x
	}
}

// RecordOutcomes takes the outcomes of a decision made beside the cycles
// (a fast-lane round) into the explanations, as a cycle's are.
func (s *Scheduler) RecordOutcomes(snap *api.Snapshot, outcomes map[api.JobID]*framework.JobOutcome, at time.Time) {
	s.explained.record(snap, outcomes, at)
}

// Explain returns the latest explanation of the job (its PodGroup's
// namespace and name).
func (s *Scheduler) Explain(namespace, name string) (Explanation, bool) {
	s.explained.mu.Lock()
	defer s.explained.mu.Unlock()
	x, ok := s.explained.jobs[api.NewJobID(namespace, name)]
	return x, ok
}

// Explanations returns every job's latest explanation, by namespace and
// name.
func (s *Scheduler) Explanations() []Explanation {
	s.explained.mu.Lock()
	out := make([]Explanation, 0, len(s.explained.jobs))
	for _, x := range s.explained.jobs {
		out = append(out, x)
	}
	s.explained.mu.Unlock()
	slices.SortFunc(out, func(a, b Explanation) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out
}

// ExplainPath is where the scheduler serves explanations: the list at
// ExplainPath, one job at ExplainPath + "<namespace>/<podgroup>".
const ExplainPath = "/debug/jobs/"

// ExplainHandler serves explanations as JSON.
func (s *Scheduler) ExplainHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "only GET is served", http.StatusMethodNotAllowed)
			return
		}
		rest := strings.Trim(strings.TrimPrefix(r.URL.Path, ExplainPath), "/")
		var body any
		switch parts := strings.Split(rest, "/"); {
		case rest == "":
			body = s.Explanations()
		case len(parts) == 2:
			x, ok := s.Explain(parts[0], parts[1])
			if !ok {
				http.Error(w, "no explanation for "+rest+": the job is placed, unknown, or not judged yet", http.StatusNotFound)
				return
			}
			body = x
		default:
			http.Error(w, "want "+ExplainPath+"<namespace>/<podgroup>", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(body)
	})
}
