package podfit

import (
	"context"
	"encoding/json"
	"fmt"

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
		fragments, st := p.SignPod(ctx, pod)
		if !st.IsSuccess() {
			return "", false
		}
		for _, f := range fragments {
			sig[f.Key] = f.Value
		}
	}
	// A pod's labels matter only to the affinity terms of pods already
	// placed; without any, pods differing only in labels are alike.
	if !e.lister.anyWithAffinity() {
		delete(sig, fwk.LabelsSignerName)
	}
	b, err := json.Marshal(sig)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// KeptScores are a pod's raw scores on a list of nodes, kept so that
// pods with the same signature can reuse them, rescoring only the nodes
// that changed.
type KeptScores struct {
	e     *Evaluator
	pod   *corev1.Pod
	state fwk.CycleState
	raw   []fwk.NodePluginScores
	// work is NormalizeScores' scratch copy of raw.
	work []fwk.NodePluginScores
}

// KeepScores scores the nodes for the pod as Score does and keeps the raw
// scores. Use it only for a signed pod.
func (e *Evaluator) KeepScores(ctx context.Context, s *PodState, nodes []*api.NodeInfo) (*KeptScores, error) {
	infos := make([]fwk.NodeInfo, len(nodes))
	for i, n := range nodes {
		infos[i] = n.K8s
	}
	state := s.state.Clone()
	if st := e.fw.RunPreScorePlugins(ctx, state, s.pod, infos); !st.IsSuccess() {
		return nil, fmt.Errorf("scoring pod %s/%s: %w", s.pod.Namespace, s.pod.Name, st.AsError())
	}
	scores, st := e.fw.RunScorePlugins(ctx, state, s.pod, infos)
	if !st.IsSuccess() {
		return nil, fmt.Errorf("scoring pod %s/%s: %w", s.pod.Namespace, s.pod.Name, st.AsError())
	}
	k := &KeptScores{e: e, pod: s.pod, state: state, raw: make([]fwk.NodePluginScores, len(scores))}
	for i, sc := range scores {
		k.raw[i] = fwk.NodePluginScores{Name: sc.Name, RawScores: sc.RawScores}
	}
	return k, nil
}

// Update rescores node i, which changed since it was scored.
func (k *KeptScores) Update(ctx context.Context, i int, node *api.NodeInfo) error {
	raw, st := k.e.fw.RunRawScorePlugins(ctx, k.state, k.pod, node.K8s)
	if !st.IsSuccess() {
		return fmt.Errorf("scoring pod %s/%s on %s: %w", k.pod.Namespace, k.pod.Name, node.Name, st.AsError())
	}
	k.raw[i] = fwk.NodePluginScores{Name: node.Name, RawScores: raw}
	return nil
}

// Remove drops node i, keeping the order of the others.
func (k *KeptScores) Remove(i int) {
	k.raw = append(k.raw[:i], k.raw[i+1:]...)
}

// Totals normalises the kept raw scores across the kept nodes, as
// kube-scheduler does across the nodes that passed Filter, and returns
// each node's weighted total.
func (k *KeptScores) Totals(ctx context.Context, out []int64) ([]int64, error) {
	k.work = append(k.work[:0], k.raw...)
	if st := k.e.fw.NormalizeScores(ctx, k.state, k.pod, k.work); !st.IsSuccess() {
		return nil, fmt.Errorf("normalising scores of pod %s/%s: %w", k.pod.Namespace, k.pod.Name, st.AsError())
	}
	out = out[:0]
	for _, s := range k.work {
		out = append(out, s.TotalScore)
	}
	return out, nil
}
