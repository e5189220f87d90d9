// Package tasktopology places the pods of a job by how its tasks talk to
// each other: the job's annotations name tasks that should share nodes
// (volcano.sh/task-topology-affinity), tasks that should not
// (volcano.sh/task-topology-anti-affinity), and the order in which tasks
// are placed (volcano.sh/task-topology-task-order).
//
// When a cycle opens, the pods of every such job are grouped into buckets,
// each meant for one node (see buildBuckets). The pods go in task order,
// bucket by bucket. The first pod of a bucket prefers an empty node that
// can hold the whole bucket; the others follow it to that node; a pod never
// prefers a node holding a pod it is anti-affine to. These are
// preferences: when no other node fits, pods share nodes against them.
package tasktopology

import (
	"cmp"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/pluginargs"
)

// Name is the plugin's name in the configuration.
const Name = "task-topology"

// MaxNodeScore is the score of the node a pod's bucket is on.
const MaxNodeScore = 100

// Scores below MaxNodeScore, for a pod whose bucket is not on the node.
const (
	// emptyNodeScore is the score of a node without pods of the job for
	// the first pod of a bucket; up to as much again as the node can hold
	// of the bucket.
	emptyNodeScore = MaxNodeScore / 2
	// spillScore is the most a node gets, by its share of the pods the pod
	// is affine to, when the pod's bucket is on another node (that is full).
	spillScore = MaxNodeScore / 2
	// sharedScore is the most a node already used by other buckets of the
	// job gets for the first pod of a bucket, likewise.
	sharedScore = MaxNodeScore / 4
	// antiScore is the score of a node holding a pod the pod is
	// anti-affine to.
	antiScore = -MaxNodeScore
)

// Plugin is the task-topology plugin.
type Plugin struct {
	weight float64
	jobs   map[api.JobID]*jobTopology
}

// jobTopology is one job's relations and buckets for the cycle.
type jobTopology struct {
	job *api.JobInfo
	// invalid is why the job's annotations cannot be read.
	invalid string
	rel     *relations
	buckets []*bucket
	member  map[api.TaskID]membership
}

var (
	_ framework.SessionPlugin     = &Plugin{}
	_ framework.JobValidPlugin    = &Plugin{}
	_ framework.TaskOrderPlugin   = &Plugin{}
	_ framework.NodeScorePlugin   = &Plugin{}
	_ framework.ScoreKeeperPlugin = &Plugin{}
	_ framework.SignerPlugin      = &Plugin{}
)

// New builds the plugin from *TaskTopologyArgs (nil means the defaults).
func New(args any, _ *framework.Handle) (framework.Plugin, error) {
	a, err := pluginargs.Typed[configv1alpha1.TaskTopologyArgs](Name, args)
	if err != nil {
		return nil, err
	}
	return &Plugin{weight: float64(*a.Weight)}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen reads the annotations of every job and builds its buckets.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	p.jobs = map[api.JobID]*jobTopology{}
	for id, job := range ssn.Snapshot.Jobs {
		if jt := topologyOf(job); jt != nil {
			p.jobs[id] = jt
		}
	}
}

// OnSessionClose drops the cycle's state.
func (p *Plugin) OnSessionClose(*framework.Session) { p.jobs = nil }

// topologyOf reads the job's annotations (on its PodGroup); nil when it
// has none.
func topologyOf(job *api.JobInfo) *jobTopology {
	if job.PodGroup == nil {
		return nil
	}
	tt, err := batchv1alpha1.ParseTaskTopology(job.PodGroup.Annotations)
	if err != nil {
		return &jobTopology{job: job, invalid: err.Error()}
	}
	if tt.IsEmpty() {
		return nil
	}
	jt := &jobTopology{job: job, rel: relationsOf(tt)}
	jt.buckets, jt.member = buildBuckets(job, jt.rel)
	return jt
}

// JobValid refuses a job whose task-topology annotations cannot be read.
func (p *Plugin) JobValid(job *api.JobInfo) *framework.Reason {
	if jt := p.jobs[job.UID]; jt != nil && jt.invalid != "" {
		return framework.Reasonf("InvalidTaskTopology", "%s", jt.invalid)
	}
	return nil
}

// TaskOrder places a job's pods in task order, then bucket by bucket, each
// bucket's pods in the order they joined it.
func (p *Plugin) TaskOrder(l, r *api.TaskInfo) int {
	if l.Job != r.Job {
		return 0
	}
	jt := p.jobs[l.Job]
	if jt == nil || jt.rel == nil {
		return 0
	}
	if c := cmp.Compare(jt.rel.rankOf(l.Role), jt.rel.rankOf(r.Role)); c != 0 {
		return c
	}
	lm, lok := jt.member[l.UID]
	rm, rok := jt.member[r.UID]
	switch {
	case lok && rok:
		if c := cmp.Compare(lm.bucket, rm.bucket); c != 0 {
			return c
		}
		return cmp.Compare(lm.position, rm.position)
	case lok:
		return -1
	case rok:
		return 1
	}
	return 0
}

// placedState is what the pods of a job already placed on one node mean to
// the pod being scored.
type placedState struct {
	affine  int
	anti    bool
	members int // of the pod's bucket
}

// ScoreNodes implements framework.NodeScorePlugin.
func (p *Plugin) ScoreNodes(t *api.TaskInfo, nodes []*api.NodeInfo, scores []float64) {
	jt := p.jobs[t.Job]
	if jt == nil || jt.rel == nil {
		return
	}
	m, ok := jt.member[t.UID]
	if !ok {
		return
	}
	placed := map[string]*placedState{}
	affineTotal := 0
	remaining := t.Resreq.Clone()
	for _, o := range jt.job.Tasks {
		if o.UID == t.UID {
			continue
		}
		om, inBucket := jt.member[o.UID]
		inBucket = inBucket && om.bucket == m.bucket
		if !o.Status.CountsForJob() || o.NodeName == "" {
			if inBucket && o.Status == api.Pending {
				remaining.Add(o.Resreq)
			}
			continue
		}
		s := placed[o.NodeName]
		if s == nil {
			s = &placedState{}
			placed[o.NodeName] = s
		}
		if jt.rel.isAnti(t.Role, o.Role) {
			s.anti = true
		}
		if jt.rel.isAffine(t.Role, o.Role) {
			s.affine++
			affineTotal++
		}
		if inBucket {
			s.members++
		}
	}
	home := homeOf(placed)
	for i, n := range nodes {
		s := placed[n.Name]
		var score float64
		switch {
		case s != nil && s.anti:
			score = antiScore
		case home != "" && n.Name == home:
			score = MaxNodeScore
		case home != "":
			score = share(spillScore, s, affineTotal)
		case s == nil:
			score = emptyNodeScore + emptyNodeScore*fit(n.Idle, remaining)
		default:
			score = share(sharedScore, s, affineTotal)
		}
		scores[i] += p.weight * score
	}
}

// homeOf is the node holding the most placed pods of the bucket (by name
// among equals); "" when none is placed.
func homeOf(placed map[string]*placedState) string {
	home, most := "", 0
	for _, name := range slices.Sorted(maps.Keys(placed)) {
		if s := placed[name]; s.members > most {
			home, most = name, s.members
		}
	}
	return home
}

// share is max times the node's share of the placed pods the pod is
// affine to.
func share(max float64, s *placedState, total int) float64 {
	if s == nil || total == 0 {
		return 0
	}
	return max * float64(s.affine) / float64(total)
}

// fit is how much of req idle holds: 1 when all of it, else the smallest
// share over the resources req asks for.
func fit(idle, req *api.Resource) float64 {
	f := 1.0
	take := func(have, want int64) {
		if want > 0 {
			f = min(f, max(0, float64(have)/float64(want)))
		}
	}
	take(idle.MilliCPU, req.MilliCPU)
	take(idle.Memory, req.Memory)
	take(idle.MilliPods, req.MilliPods)
	req.EachScalar(func(name corev1.ResourceName, milli int64) { take(idle.Get(name), milli) })
	return f
}

// Signature: a pod in a bucket scores by where the rest of its job is, so
// placing any pod of the job changes its scores everywhere; it has none.
// Other pods score 0 everywhere.
func (p *Plugin) Signature(t *api.TaskInfo) (string, bool) {
	if jt := p.jobs[t.Job]; jt != nil {
		if _, ok := jt.member[t.UID]; ok {
			return "", false
		}
	}
	return "", true
}

// KeepScores keeps the scores of a signed pod: 0 on every node.
func (p *Plugin) KeepScores(t *api.TaskInfo, nodes []*api.NodeInfo) (framework.KeptScores, error) {
	return framework.NodeLocalScores(p, t, nodes), nil
}
