package tasktopology

import (
	"cmp"
	"maps"
	"slices"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// relations says how the tasks (roles) of one job relate.
type relations struct {
	affine map[pair]bool
	anti   map[pair]bool
	// related holds the roles in some affinity or anti-affinity group.
	related map[string]bool
	// hasAnti holds the roles in some anti-affinity group.
	hasAnti map[string]bool
	// rank is each role's position in the task-order annotation.
	rank map[string]int
}

// pair is an unordered pair of roles.
type pair struct{ a, b string }

func pairOf(a, b string) pair {
	if b < a {
		a, b = b, a
	}
	return pair{a, b}
}

// relationsOf turns the annotations into relations between roles. A group
// of several roles relates each two different roles of it; a group of one
// role relates the role's pods to each other. Anti-affinity wins over
// affinity for the same two roles.
func relationsOf(tt *batchv1alpha1.TaskTopology) *relations {
	r := &relations{
		affine: map[pair]bool{}, anti: map[pair]bool{},
		related: map[string]bool{}, hasAnti: map[string]bool{}, rank: map[string]int{},
	}
	add := func(groups [][]string, to map[pair]bool) {
		for _, g := range groups {
			for _, n := range g {
				r.related[n] = true
			}
			if len(g) == 1 {
				to[pairOf(g[0], g[0])] = true
				continue
			}
			for i := range g {
				for j := i + 1; j < len(g); j++ {
					to[pairOf(g[i], g[j])] = true
				}
			}
		}
	}
	add(tt.Affinity, r.affine)
	add(tt.AntiAffinity, r.anti)
	for p := range r.anti {
		delete(r.affine, p)
		r.hasAnti[p.a], r.hasAnti[p.b] = true, true
	}
	for i, n := range tt.Order {
		r.rank[n] = i
	}
	return r
}

func (r *relations) isAffine(a, b string) bool { return r.affine[pairOf(a, b)] }
func (r *relations) isAnti(a, b string) bool   { return r.anti[pairOf(a, b)] }

// rankOf is the role's place in the task order; roles not listed come
// after all that are.
func (r *relations) rankOf(role string) int {
	if i, ok := r.rank[role]; ok {
		return i
	}
	return len(r.rank)
}

// bucket is a set of a job's pods meant for one node.
type bucket struct {
	index int
	// roles counts the members by role.
	roles   map[string]int
	members int
	request *api.Resource
}

func (b *bucket) add(t *api.TaskInfo) {
	b.roles[t.Role]++
	b.members++
	b.request.Add(t.Resreq)
}

// lighter reports whether b asks for less than o: CPU, then memory, then
// fewer members.
func (b *bucket) lighter(o *bucket) bool {
	if c := cmp.Compare(b.request.MilliCPU, o.request.MilliCPU); c != 0 {
		return c < 0
	}
	if c := cmp.Compare(b.request.Memory, o.request.Memory); c != 0 {
		return c < 0
	}
	return b.members < o.members
}

// membership is where a task stands in its job's buckets.
type membership struct {
	bucket int
	// position is the order in which the task joined its bucket.
	position int
}

// buildBuckets groups the job's related pods into buckets, one per node
// they should share. The pods already placed form a bucket per node. The
// pending pods then join one by one, those with anti-affinity first (they
// open the most buckets), then those affine to the most pods: each joins
// the bucket with
// the most members it is affine to and none it is anti-affine to, the
// lightest of equals; a pod affine to no such bucket opens a new one.
func buildBuckets(job *api.JobInfo, rel *relations) ([]*bucket, map[api.TaskID]membership) {
	var buckets []*bucket
	member := map[api.TaskID]membership{}
	join := func(b *bucket, t *api.TaskInfo) {
		member[t.UID] = membership{bucket: b.index, position: b.members}
		b.add(t)
	}
	open := func() *bucket {
		b := &bucket{index: len(buckets), roles: map[string]int{}, request: &api.Resource{}}
		buckets = append(buckets, b)
		return b
	}

	byNode := map[string][]*api.TaskInfo{}
	var pending []*api.TaskInfo
	for _, t := range job.Tasks {
		if !rel.related[t.Role] {
			continue
		}
		switch {
		case t.Status == api.Pending:
			pending = append(pending, t)
		case t.Status.CountsForJob() && t.NodeName != "":
			byNode[t.NodeName] = append(byNode[t.NodeName], t)
		}
	}
	for _, node := range slices.Sorted(maps.Keys(byNode)) {
		b := open()
		tasks := byNode[node]
		slices.SortFunc(tasks, byName)
		for _, t := range tasks {
			join(b, t)
		}
	}

	// Pods affine to many pods seed buckets best: a parameter server
	// before its workers.
	count := map[string]int{}
	for _, t := range job.Tasks {
		count[t.Role]++
	}
	degree := map[string]int{}
	for p := range rel.affine {
		if p.a == p.b {
			degree[p.a] += count[p.a]
			continue
		}
		degree[p.a] += count[p.b]
		degree[p.b] += count[p.a]
	}
	slices.SortFunc(pending, func(l, r *api.TaskInfo) int {
		if la, ra := rel.hasAnti[l.Role], rel.hasAnti[r.Role]; la != ra {
			if la {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(degree[r.Role], degree[l.Role]); c != 0 {
			return c
		}
		return byName(l, r)
	})
	for _, t := range pending {
		var best *bucket
		bestScore := 0
		for _, b := range buckets {
			score, ok := affinity(rel, t.Role, b)
			if !ok || score == 0 {
				continue
			}
			if score > bestScore || score == bestScore && b.lighter(best) {
				best, bestScore = b, score
			}
		}
		if best == nil {
			best = open()
		}
		join(best, t)
	}
	return buckets, member
}

// affinity counts the members of b that a pod of role is affine to; ok is
// false when it is anti-affine to one of them.
func affinity(rel *relations, role string, b *bucket) (score int, ok bool) {
	for r, n := range b.roles {
		if rel.isAnti(role, r) {
			return 0, false
		}
		if rel.isAffine(role, r) {
			score += n
		}
	}
	return score, true
}

func byName(l, r *api.TaskInfo) int {
	if c := cmp.Compare(l.Name, r.Name); c != 0 {
		return c
	}
	return cmp.Compare(l.UID, r.UID)
}
