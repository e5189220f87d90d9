package podfit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unique"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/helper"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Signatures: two pods with the same signature pass the same filters and
// get the same raw scores on a node in a given state, and placing one of
// them changes the results of no node but the one it went to. A cycle that
// places many alike pods (a gang's workers, a backlog of copies) filters
// and scores each node once and then only the nodes that changed.
//
// The upstream plugins sign pods themselves (kube-scheduler's opportunistic
// batching). PodTopologySpread refuses every pod when default constraints
// are configured, as in kube-scheduler's default profile, because whether
// they apply depends on the services and workloads selecting the pod; here
// that is decided per pod: a pod without constraints of its own, which no
// service, replication controller, replica set or stateful set selects,
// has no default constraints either, and is signed.

// signers captures the plugin instances the framework builds, to ask them
// for signatures.
type signers struct {
	plugins []fwk.Plugin
}

func (s *signers) wrap(r frameworkruntime.Registry) frameworkruntime.Registry {
	out := make(frameworkruntime.Registry, len(r))
	for name, f := range r {
		out[name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := f(ctx, args, h)
			if err == nil {
				s.plugins = append(s.plugins, p)
			}
			return p, err
		}
	}
	return out
}

// spreadListers are what topology spread's default selector reads.
type spreadListers struct {
	services     corelisters.ServiceLister
	controllers  corelisters.ReplicationControllerLister
	replicaSets  appslisters.ReplicaSetLister
	statefulSets appslisters.StatefulSetLister
}

func newSpreadListers(f informers.SharedInformerFactory) *spreadListers {
	return &spreadListers{
		services:     f.Core().V1().Services().Lister(),
		controllers:  f.Core().V1().ReplicationControllers().Lister(),
		replicaSets:  f.Apps().V1().ReplicaSets().Lister(),
		statefulSets: f.Apps().V1().StatefulSets().Lister(),
	}
}

// setUpSigning keeps the plugins that sign pods; when one of the plugins
// run cannot sign, no pod is signed.
func (e *Evaluator) setUpSigning(captured []fwk.Plugin, f informers.SharedInformerFactory) {
	inert := map[string]bool{}
	for _, n := range inertPlugins {
		inert[n] = true
	}
	e.signers = nil
	e.signing = true
	e.scorers = map[string]fwk.ScorePlugin{}
	e.weights = map[string]int64{}
	e.scoreOrder = nil
	for _, p := range e.fw.ListPlugins().Score.Enabled {
		e.weights[p.Name] = int64(p.Weight)
		e.scoreOrder = append(e.scoreOrder, p.Name)
	}
	for _, p := range captured {
		if sp, ok := p.(fwk.ScorePlugin); ok {
			e.scorers[p.Name()] = sp
		}
	}
	for _, p := range captured {
		switch {
		case inert[p.Name()]:
		case p.Name() == names.PodTopologySpread:
			e.spread = newSpreadListers(f)
		default:
			sp, ok := p.(fwk.SignPlugin)
			if !ok {
				e.signing = false
				return
			}
			e.signers = append(e.signers, sp)
		}
	}
	e.signers, e.sameSigners = withoutSameSigners(e.signers)
}

// sameSignerAs names the plugins that sign a pod with exactly the fragment
// another plugin signs it with: BalancedAllocation's only fragment is
// Fit's (the pod's requests, worked out again; TestSameSignersSignAlike
// holds it to that), and working out a pod's requests is most of what
// signing it costs.
var sameSignerAs = map[string]string{names.NodeResourcesBalancedAllocation: names.NodeResourcesFit}

// withoutSameSigners returns the signers less those whose fragment another
// of them gives (sameSignerAs), and those left out.
func withoutSameSigners(signers []fwk.SignPlugin) (kept, same []fwk.SignPlugin) {
	present := map[string]bool{}
	for _, p := range signers {
		present[p.Name()] = true
	}
	for _, p := range signers {
		if other, ok := sameSignerAs[p.Name()]; ok && present[other] {
			same = append(same, p)
			continue
		}
		kept = append(kept, p)
	}
	return kept, same
}

// Signature returns the pod's signature, or false when pods like it may
// not share results (inter-pod affinity, topology spread, volumes that
// cannot be signed, ...). A signature holds while the placed pods with
// inter-pod affinity terms stay the same: placing or removing such a pod
// invalidates every signature and the results kept for it.
func (e *Evaluator) Signature(ctx context.Context, pod *corev1.Pod) (string, bool) {
	if !e.signing {
		return "", false
	}
	if e.spread != nil {
		if len(pod.Spec.TopologySpreadConstraints) > 0 {
			return "", false
		}
		if !helper.DefaultSelector(pod, e.spread.services, e.spread.controllers, e.spread.replicaSets, e.spread.statefulSets).Empty() {
			return "", false
		}
	}
	sig := map[string]any{
		fwk.SchedulerNameSignerName: pod.Spec.SchedulerName,
		// Existing pods' anti-affinity terms select pods by namespace too.
		"caldera.sh/namespace": pod.Namespace,
	}
	for _, p := range e.signers {
		if p.Name() == names.DynamicResources && len(pod.Spec.ResourceClaims) > 0 {
			// The plugin signs no pod with claims; alike claims sign it
			// here (dra.go).
			if e.draView == nil {
				return "", false
			}
			claims, ok := e.draView.signature(pod)
			if !ok {
				return "", false
			}
			sig["caldera.sh/resource-claims"] = claims
			continue
		}
		fragments, st := p.SignPod(ctx, pod)
		if !st.IsSuccess() {
			return "", false
		}
		for _, f := range fragments {
			sig[f.Key] = f.Value
		}
	}
	// A pod's labels matter only to the affinity terms of pods already
	// placed; without any, pods differing only in labels are alike. The
	// bound kept since the nodes were set answers without a pass over
	// every node for each pod signed.
	if !e.lister.mayHaveAffinity() {
		delete(sig, fwk.LabelsSignerName)
	}
	b, err := json.Marshal(sig)
	if err != nil {
		return "", false
	}
	// Pods alike share one copy of their signature: a cycle keeps the
	// signature of every pod it looks at, and a backlog is mostly alike.
	return unique.Make(string(b)).Value(), true
}

// KeptScores are a pod's raw scores on a list of nodes, kept so that
// pods with the same signature can reuse them, rescoring only the nodes
// that changed. Each score plugin's column is normalised again only when
// one of its raw scores changed (or a node left), as kube-scheduler
// normalises across the nodes that passed Filter; totals are the weighted
// sums, as kube-scheduler's.
type KeptScores struct {
	e     *Evaluator
	pod   *corev1.Pod
	state fwk.CycleState
	// names, weights and normalizers describe the plugins scored, in the
	// order RunRawScorePlugins returns them.
	names       []string
	weights     []int64
	normalizers []fwk.ScoreExtensions
	nodes       []string
	// raw[p][i] and normed[p][i]: plugin p's raw and normalised score of
	// node i; dirty[p]: normed[p] must be recomputed.
	raw, normed [][]int64
	dirty       []bool
	scratch     fwk.NodeScoreList
	// kept are the results kept for the pod's signature, nil when the
	// pod does not qualify.
	kept *sigResults
}

// KeepScores scores the nodes for the pod and keeps the raw scores, for
// Update and Totals. Reusing them for another pod (FindNode's alike tasks)
// is for signed pods only; a node's raw scores kept from an earlier cycle
// (kept.go) are used when they hold.
func (e *Evaluator) KeepScores(ctx context.Context, fs framework.PodFitState, nodes []*api.NodeInfo) (framework.PodFitScores, error) {
	return e.keepScores(ctx, fs.(*PodState), nodes)
}

func (e *Evaluator) keepScores(ctx context.Context, s *PodState, nodes []*api.NodeInfo) (*KeptScores, error) {
	infos := make([]fwk.NodeInfo, len(nodes))
	for i, n := range nodes {
		infos[i] = nodeInfoOf(n)
	}
	state := s.state.Clone()
	if st := e.fw.RunPreScorePlugins(ctx, state, s.pod, infos); !st.IsSuccess() {
		return nil, fmt.Errorf("scoring pod %s/%s: %w", s.pod.Namespace, s.pod.Name, st.AsError())
	}
	k := &KeptScores{e: e, pod: s.pod, state: state, nodes: make([]string, len(nodes))}
	// The plugins run, as the framework's RunRawScorePlugins picks them.
	skip := state.GetSkipScorePlugins()
	for _, name := range e.scoreOrder {
		if skip.Has(name) {
			continue
		}
		pl, ok := e.scorers[name]
		if !ok {
			return nil, fmt.Errorf("score plugin %s unknown", name)
		}
		k.names = append(k.names, name)
		k.weights = append(k.weights, e.weights[name])
		k.normalizers = append(k.normalizers, pl.ScoreExtensions())
		k.raw = append(k.raw, make([]int64, len(nodes)))
		k.normed = append(k.normed, make([]int64, len(nodes)))
		k.dirty = append(k.dirty, true)
	}
	if k.kept = e.keptFor(ctx, s); k.kept != nil {
		e.scoresKeptBy(k.kept, k.names)
	}
	// Score the nodes in parallel, as RunScorePlugins does, unless the
	// evaluator runs on one goroutine.
	raws := make([][]int64, len(nodes))
	errs := make([]error, len(nodes))
	score := func(i int) {
		raws[i], errs[i] = k.rawScores(ctx, nodes[i])
	}
	if e.parallelism == 1 {
		for i := range nodes {
			score(i)
		}
	} else {
		e.fw.Parallelizer().Until(ctx, len(nodes), score, "KeepScores")
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, n := range nodes {
		k.nodes[i] = n.Name
		k.set(i, raws[i])
	}
	return k, nil
}

// rawScores returns the node's raw scores in the order of k.names, kept
// ones when they hold; callers must not change them.
func (k *KeptScores) rawScores(ctx context.Context, node *api.NodeInfo) ([]int64, error) {
	if k.kept != nil {
		if raw, ok := k.e.keptScore(k.kept, node); ok {
			return raw, nil
		}
	}
	info := nodeInfoOf(node)
	generation := info.Generation
	scores, st := k.e.fw.RunRawScorePlugins(ctx, k.state, k.pod, info)
	if !st.IsSuccess() {
		return nil, fmt.Errorf("scoring pod %s/%s on %s: %w", k.pod.Namespace, k.pod.Name, node.Name, st.AsError())
	}
	if len(scores) != len(k.names) {
		return nil, fmt.Errorf("scoring pod %s/%s on %s: %d plugins scored, %d expected", k.pod.Namespace, k.pod.Name, node.Name, len(scores), len(k.names))
	}
	raw := make([]int64, len(scores))
	for p, r := range scores {
		if r.Name != k.names[p] {
			return nil, fmt.Errorf("scoring pod %s/%s on %s: plugin %s scored in place of %s", k.pod.Namespace, k.pod.Name, node.Name, r.Name, k.names[p])
		}
		raw[p] = r.Score
	}
	if k.kept != nil {
		k.e.keepScore(k.kept, node, generation, raw)
	}
	return raw, nil
}

// set records node i's raw scores, marking the columns that changed.
func (k *KeptScores) set(i int, raw []int64) {
	for p, v := range raw {
		if k.raw[p][i] == v && !k.dirty[p] {
			continue
		}
		k.raw[p][i] = v
		if k.normalizers[p] == nil {
			k.normed[p][i] = v
		} else {
			k.dirty[p] = true
		}
	}
}

// Update rescores node i, which changed since it was scored.
func (k *KeptScores) Update(ctx context.Context, i int, node *api.NodeInfo) error {
	raw, err := k.rawScores(ctx, node)
	if err != nil {
		return err
	}
	k.set(i, raw)
	return nil
}

// Remove drops node i, keeping the order of the others.
func (k *KeptScores) Remove(i int) {
	k.nodes = append(k.nodes[:i], k.nodes[i+1:]...)
	for p := range k.names {
		k.raw[p] = append(k.raw[p][:i], k.raw[p][i+1:]...)
		k.normed[p] = append(k.normed[p][:i], k.normed[p][i+1:]...)
		if k.normalizers[p] != nil {
			k.dirty[p] = true
		}
	}
}

// Totals returns each kept node's weighted total score.
func (k *KeptScores) Totals(ctx context.Context, out []int64) ([]int64, error) {
	for p, n := range k.normalizers {
		if !k.dirty[p] {
			continue
		}
		if n != nil {
			k.scratch = k.scratch[:0]
			for i, name := range k.nodes {
				k.scratch = append(k.scratch, fwk.NodeScore{Name: name, Score: k.raw[p][i]})
			}
			if st := n.NormalizeScore(ctx, k.state, k.pod, k.scratch); !st.IsSuccess() {
				return nil, fmt.Errorf("normalising %s scores of pod %s/%s: %w", k.names[p], k.pod.Namespace, k.pod.Name, st.AsError())
			}
			for i := range k.scratch {
				k.normed[p][i] = k.scratch[i].Score
			}
		} else {
			copy(k.normed[p], k.raw[p])
		}
		k.dirty[p] = false
	}
	out = out[:0]
	for i := range k.nodes {
		var total int64
		for p, w := range k.weights {
			v := k.normed[p][i]
			if v < fwk.MinNodeScore || v > fwk.MaxNodeScore {
				// As RunScorePlugins refuses it.
				return nil, fmt.Errorf("plugin %s returned an invalid score %d for pod %s/%s on %s; it must be in [%d, %d]", k.names[p], v, k.pod.Namespace, k.pod.Name, k.nodes[i], fwk.MinNodeScore, fwk.MaxNodeScore)
			}
			total += v * w
		}
		out = append(out, total)
	}
	return out, nil
}
