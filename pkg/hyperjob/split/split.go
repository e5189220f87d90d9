// Package split decides how a HyperJob's replicated jobs become child jobs
// and which member cluster each child goes to. It is pure: it reads a
// snapshot of what the clusters have free and returns a plan, or why no
// plan fits now.
//
// A replicated job is sized in one of three ways:
//
//   - as written: Replicas children, each the template as it is;
//   - static: Replicas children sharing Accelerators equally, each child's
//     scaling task (the task requesting the accelerator) given the pods its
//     share needs;
//   - auto: as few children as the clusters' free accelerators allow, each
//     as large as its cluster can hold, together Accelerators.
//
// Children go to clusters by "fewest clusters first": a child goes to a
// cluster the HyperJob already uses if one holds it, else to the allowed
// cluster with the most free accelerators (then the most free of its
// dominant resource, then name). A HyperJob never uses more than MaxDomains
// clusters. Replicated jobs are planned in order, each seeing what the
// earlier ones took.
//
// A replicated job whose template selects nodes by label (an accelerator
// model, say nvidia.com/gpu.product=H100) counts, in a cluster whose node
// pools are known, only the free capacity of the pools that match, never
// more than the cluster has free; in a cluster whose pools are not known,
// the cluster's own labels must agree with the selector on every key some
// cluster carries as a label. Keys no cluster carries are left to the
// members' schedulers.
package split

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/federation/resources"
)

// Mode is how a replicated job is sized.
type Mode int

// Modes.
const (
	AsWritten Mode = iota
	Static
	Auto
)

// Cluster is a member as the split sees it.
type Cluster struct {
	Name string
	// Free is what the cluster can take now (allocatable minus what is
	// allocated, allocating, or promised to released work).
	Free resources.Amounts
	// Labels are the cluster's own labels.
	Labels map[string]string
	// Pools, when not nil, are the cluster's nodes grouped by the values
	// of Input.PoolLabels, with what each group has free.
	Pools []Pool
}

// Pool is a group of a cluster's nodes with the same values of the pool
// labels (a node without one has no such key in Labels).
type Pool struct {
	Labels map[string]string
	Free   resources.Amounts
}

// ReplicatedJob is one template of the HyperJob, reduced to what sizing
// and placement need.
type ReplicatedJob struct {
	Name string
	Mode Mode
	// Replicas is the number of children (AsWritten and Static).
	Replicas int32
	// Accelerator is the resource split (Static and Auto) and
	// Accelerators its total over all children.
	Accelerator  corev1.ResourceName
	Accelerators int64
	// Fixed is one child's request of the tasks that do not scale; with
	// AsWritten, the whole child's.
	Fixed resources.Amounts
	// Pod is one pod of the scaling task, and PodAccelerators its count of
	// the accelerator (whole units). MinPods is the fewest pods a child may
	// have (at least 1).
	Pod             resources.Amounts
	PodAccelerators int64
	MinPods         int32
	// Clusters are the clusters its children may go to; nil means any.
	Clusters []string
	// Selector is the node selector of the template's pods.
	Selector map[string]string
}

// Input is a HyperJob to plan.
type Input struct {
	Name           string
	ReplicatedJobs []ReplicatedJob
	// MaxDomains bounds the clusters used; 0 means no bound.
	MaxDomains int32
	// PoolLabels are the node labels the clusters' pools are grouped by.
	PoolLabels []string
}

// Child is one child job of the plan.
type Child struct {
	// Name is <hyperjob>-<replicatedJob>-<index>.
	Name          string
	ReplicatedJob string
	Index         int32
	Cluster       string
	// Pods is the scaling task's pod count (0 with AsWritten), and
	// Accelerators the child's total of the accelerator.
	Pods         int32
	Accelerators int64
	// Request is the whole child's request.
	Request resources.Amounts
}

// Plan is where every child goes.
type Plan struct {
	Children []Child
	// Clusters are the clusters used, sorted.
	Clusters []string
}

// Infeasible says why no plan fits now: the clusters lack room, or the
// bound on domains is too tight. It is a reason to wait, not an error in
// the HyperJob.
type Infeasible struct {
	ReplicatedJob string
	Message       string
}

func (e *Infeasible) Error() string {
	return fmt.Sprintf("replicated job %q: %s", e.ReplicatedJob, e.Message)
}

// Split plans the HyperJob on the clusters, all of it or nothing: it
// returns an *Infeasible when the clusters cannot take all of it now. The
// clusters given are not changed.
func Split(in *Input, clusters []Cluster) (*Plan, error) {
	st := &state{in: in, free: make(map[string]resources.Amounts, len(clusters)), used: map[string]bool{},
		labels: map[string]map[string]string{}, pools: map[string][]Pool{}, carried: map[string]bool{}}
	for _, c := range clusters {
		st.free[c.Name] = c.Free.Clone()
		st.names = append(st.names, c.Name)
		st.labels[c.Name] = c.Labels
		for k := range c.Labels {
			st.carried[k] = true
		}
		if c.Pools != nil {
			pools := make([]Pool, len(c.Pools))
			for i, p := range c.Pools {
				pools[i] = Pool{Labels: p.Labels, Free: p.Free.Clone()}
			}
			st.pools[c.Name] = pools
		}
	}
	slices.Sort(st.names)
	plan := &Plan{}
	for i := range in.ReplicatedJobs {
		rj := &in.ReplicatedJobs[i]
		st.focus(rj)
		var children []Child
		var err error
		switch rj.Mode {
		case Auto:
			children, err = st.auto(rj)
		default:
			children, err = st.fixed(rj)
		}
		if err != nil {
			return nil, err
		}
		plan.Children = append(plan.Children, children...)
	}
	for name := range st.used {
		plan.Clusters = append(plan.Clusters, name)
	}
	slices.Sort(plan.Clusters)
	return plan, nil
}

type state struct {
	in    *Input
	names []string
	free  map[string]resources.Amounts
	used  map[string]bool
	// labels and pools are each cluster's; carried are the label keys
	// some cluster has.
	labels  map[string]map[string]string
	pools   map[string][]Pool
	carried map[string]bool

	// The replicated job being planned: the selector's keys that pools
	// answer, and those the clusters' labels must.
	bySelector       bool
	poolSel, infoSel map[string]string
}

// focus splits the replicated job's selector into what node pools answer
// and what the clusters' labels answer.
func (st *state) focus(rj *ReplicatedJob) {
	st.poolSel, st.infoSel = map[string]string{}, map[string]string{}
	for k, v := range rj.Selector {
		switch {
		case slices.Contains(st.in.PoolLabels, k):
			st.poolSel[k] = v
		case st.carried[k]:
			st.infoSel[k] = v
		}
	}
	st.bySelector = len(st.poolSel) > 0 || len(st.infoSel) > 0
}

// admits says whether the cluster's labels agree with the replicated job's
// selector: on the keys labels answer, and, where its pools are not known,
// on the pool keys it carries or some cluster carries.
func (st *state) admits(cluster string) bool {
	labels := st.labels[cluster]
	for k, v := range st.infoSel {
		if labels[k] != v {
			return false
		}
	}
	if _, known := st.pools[cluster]; !known {
		for k, v := range st.poolSel {
			if st.carried[k] && labels[k] != v {
				return false
			}
		}
	}
	return true
}

// matching lists the indexes of the cluster's pools the selector matches;
// ok is false when pools do not decide (unknown, or no pool key selected).
func (st *state) matching(cluster string) (idx []int, ok bool) {
	pools, known := st.pools[cluster]
	if !known || len(st.poolSel) == 0 {
		return nil, false
	}
	for i, p := range pools {
		match := true
		for k, v := range st.poolSel {
			match = match && p.Labels[k] == v
		}
		if match {
			idx = append(idx, i)
		}
	}
	return idx, true
}

// room is what the replicated job being planned may use in the cluster:
// nothing where its labels disagree; the matching pools' free, within the
// cluster's, where pools decide; else the cluster's free.
func (st *state) room(cluster string) resources.Amounts {
	if !st.bySelector {
		return st.free[cluster]
	}
	if !st.admits(cluster) {
		return resources.Amounts{}
	}
	idx, ok := st.matching(cluster)
	if !ok {
		return st.free[cluster]
	}
	sum := resources.Amounts{}
	for _, i := range idx {
		sum.Add(st.pools[cluster][i].Free)
	}
	free := st.free[cluster]
	for name, v := range sum {
		sum[name] = min(v, free[name])
	}
	return sum
}

// domainsLeft is how many more clusters the HyperJob may use.
func (st *state) domainsLeft() int {
	if st.in.MaxDomains <= 0 {
		return len(st.names)
	}
	return int(st.in.MaxDomains) - len(st.used)
}

// allowed lists the clusters the replicated job may use, sorted: those the
// HyperJob uses already, then the others by most free accelerators, most
// free of their dominant resource, name.
func (st *state) allowed(rj *ReplicatedJob) []string {
	type key struct {
		name     string
		used     bool
		acc, dom int64
	}
	keys := make([]key, 0, len(st.names))
	for _, name := range st.names {
		if (rj.Clusters == nil || slices.Contains(rj.Clusters, name)) && st.admits(name) {
			room := st.room(name)
			keys = append(keys, key{name: name, used: st.used[name], acc: room[rj.Accelerator], dom: dominant(room)})
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.used != b.used {
			if a.used {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.acc, a.acc), cmp.Compare(b.dom, a.dom), strings.Compare(a.name, b.name))
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.name
	}
	return out
}

// dominant is a cluster's largest free amount, for ties only.
func dominant(r resources.Amounts) int64 {
	var m int64
	for _, v := range r {
		m = max(m, v)
	}
	return m
}

// take places a child on a cluster, if it fits and the domain bound allows.
func (st *state) take(cluster string, req resources.Amounts) bool {
	if !st.used[cluster] && st.domainsLeft() <= 0 {
		return false
	}
	if !req.Fits(st.room(cluster)) {
		return false
	}
	st.free[cluster].Sub(req)
	st.used[cluster] = true
	// The matching pools give what the child takes, first pool first. A
	// child that selects no pool could land in any: pools are left as they
	// are, and the cluster's free, which every room is within, shrinks.
	if idx, ok := st.matching(cluster); ok {
		left := req.Clone()
		for _, i := range idx {
			free := st.pools[cluster][i].Free
			for name, v := range left {
				take := min(v, max(free[name], 0))
				free[name] -= take
				left[name] = v - take
			}
		}
	}
	return true
}

func (st *state) child(rj *ReplicatedJob, i int32, cluster string, pods int32, req resources.Amounts) Child {
	acc := req[rj.Accelerator] / 1000
	if rj.Accelerator == "" {
		acc = 0
	}
	return Child{Name: fmt.Sprintf("%s-%s-%d", st.in.Name, rj.Name, i), ReplicatedJob: rj.Name, Index: i,
		Cluster: cluster, Pods: pods, Accelerators: acc, Request: req}
}

// request is a child of pods scaling pods.
func request(rj *ReplicatedJob, pods int32) resources.Amounts {
	return rj.Fixed.Clone().AddTimes(rj.Pod, int64(pods))
}

// fixed places Replicas children of a set size.
func (st *state) fixed(rj *ReplicatedJob) ([]Child, error) {
	var pods int32
	if rj.Mode == Static {
		var err error
		if pods, err = staticPods(rj); err != nil {
			return nil, err
		}
	}
	req := request(rj, pods)
	// Every child asks the same and room only shrinks: a cluster that
	// cannot take one child cannot take a later one, so the search goes on
	// from the last cluster that could.
	order := st.allowed(rj)
	next := 0
	var out []Child
	for i := range rj.Replicas {
		for next < len(order) && !st.take(order[next], req) {
			next++
		}
		if next == len(order) {
			return nil, &Infeasible{ReplicatedJob: rj.Name, Message: st.short(rj, req, rj.Replicas-i)}
		}
		out = append(out, st.child(rj, i, order[next], pods, req.Clone()))
	}
	return out, nil
}

// staticPods is the scaling task's pods in each of Replicas equal
// children sharing Accelerators.
func staticPods(rj *ReplicatedJob) (int32, error) {
	fixedAcc := rj.Fixed[rj.Accelerator] / 1000
	per := rj.Accelerators / int64(rj.Replicas)
	if rj.Accelerators%int64(rj.Replicas) != 0 || rj.PodAccelerators <= 0 || (per-fixedAcc)%rj.PodAccelerators != 0 || per-fixedAcc < rj.PodAccelerators*int64(max(rj.MinPods, 1)) {
		return 0, &Infeasible{ReplicatedJob: rj.Name, Message: fmt.Sprintf(
			"%d %s over %d children is not a whole number of pods of %d each", rj.Accelerators, rj.Accelerator, rj.Replicas, rj.PodAccelerators)}
	}
	return int32((per - fixedAcc) / rj.PodAccelerators), nil
}

// short says why count children of req have no room.
func (st *state) short(rj *ReplicatedJob, req resources.Amounts, count int32) string {
	allowed := st.allowed(rj)
	switch {
	case len(allowed) == 0:
		return "no Ready cluster is allowed"
	case st.domainsLeft() <= 0:
		return fmt.Sprintf("%d children of %s do not fit in the %d clusters already used, the most maxDomains allows", count, req, len(st.used))
	}
	best := allowed[0]
	where := ""
	if len(st.poolSel) > 0 {
		where = " on nodes with " + selectorString(st.poolSel)
	}
	return fmt.Sprintf("%d children of %s do not fit: the roomiest allowed cluster, %s, is short of %s%s", count, req, best, req.Short(st.room(best)), where)
}

// auto sizes children from the clusters' free accelerators: fewest
// clusters first, each child as large as its cluster holds, together
// Accelerators.
func (st *state) auto(rj *ReplicatedJob) ([]Child, error) {
	if rj.PodAccelerators <= 0 {
		return nil, &Infeasible{ReplicatedJob: rj.Name, Message: fmt.Sprintf("its scaling task requests no %s", rj.Accelerator)}
	}
	fixedAcc := rj.Fixed[rj.Accelerator] / 1000
	remaining := rj.Accelerators
	minPods := int64(max(rj.MinPods, 1))
	type part struct {
		cluster string
		pods    int32
	}
	var parts []part
	for _, name := range st.allowed(rj) {
		if remaining <= 0 {
			break
		}
		if !st.used[name] && st.domainsLeft() <= 0 {
			continue
		}
		pods := st.fit(rj, name, (remaining-fixedAcc+rj.PodAccelerators-1)/rj.PodAccelerators)
		if pods < minPods {
			continue
		}
		if !st.take(name, request(rj, int32(pods))) {
			continue
		}
		parts = append(parts, part{cluster: name, pods: int32(pods)})
		remaining -= fixedAcc + pods*rj.PodAccelerators
	}
	if remaining > 0 {
		msg := fmt.Sprintf("%d %s do not fit: %d more than the allowed clusters hold in children of at least %d pods", rj.Accelerators, rj.Accelerator, remaining, minPods)
		if st.in.MaxDomains > 0 {
			msg += fmt.Sprintf(" within maxDomains %d", st.in.MaxDomains)
		}
		return nil, &Infeasible{ReplicatedJob: rj.Name, Message: msg}
	}
	out := make([]Child, 0, len(parts))
	for i, p := range parts {
		out = append(out, st.child(rj, int32(i), p.cluster, p.pods, request(rj, p.pods)))
	}
	return out, nil
}

// fit is the most scaling pods, up to want, that one child in the cluster
// can have beside its fixed part.
func (st *state) fit(rj *ReplicatedJob, cluster string, want int64) int64 {
	free := st.room(cluster)
	if !rj.Fixed.Fits(free) {
		return 0
	}
	n := want
	for name, per := range rj.Pod {
		if per <= 0 {
			continue
		}
		n = min(n, (free[name]-rj.Fixed[name])/per)
	}
	return max(n, 0)
}

// selectorString is a selector as k=v pairs, sorted.
func selectorString(sel map[string]string) string {
	pairs := make([]string, 0, len(sel))
	for k, v := range sel {
		pairs = append(pairs, k+"="+v)
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}
