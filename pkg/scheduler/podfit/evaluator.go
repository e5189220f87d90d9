package podfit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	k8sframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// Options are what the upstream plugins need from outside the snapshot.
type Options struct {
	// InformerFactory serves the objects the plugins look up: claims,
	// volumes, storage classes, CSI nodes and drivers, storage capacities,
	// volume attachments, namespaces, and the services and workloads that
	// give topology spread its default selector. The plugins register their
	// informers in New: start the factory and wait for its caches after
	// New returns. Required.
	InformerFactory informers.SharedInformerFactory
	// ClientSet is what VolumeBinding's PreBind binds and provisions claims
	// with. Required.
	ClientSet clientset.Interface
	// FeatureGate gives the plugins' feature set; nil means kube-scheduler's
	// defaults (k8s.io/apiserver's DefaultFeatureGate, which this package
	// only reads). The upstream framework and NodeInfo read a few gates
	// from that global directly, so a different gate must agree with it.
	FeatureGate featuregate.FeatureGate
	// Parallelism bounds the goroutines of PreFilter and Score over nodes;
	// 0 means kube-scheduler's default (16).
	Parallelism int
	// Profile changes kube-scheduler's default profile.
	Profile ProfileOptions
	// EventRecorder records the events kube-scheduler's plugins record
	// (DynamicResources, while a device's binding conditions are pending);
	// nil discards them.
	EventRecorder events.EventRecorderLogger
	// Fresh keeps no filter verdicts or raw scores across calls
	// (kept.go): every Filter and Score runs the plugins. Tests compare
	// kept results with it.
	Fresh bool
}

// Evaluator runs kube-scheduler's pod-level plugins over the scheduler's
// snapshot. A cycle calls SetNodes once, then, for each pod it tries to
// place, PreFilter, Filter on candidate nodes, Score, and Reserve on the
// chosen node; the binder later calls PreBind (or Unreserve when the gang
// is discarded).
//
// Filter may run concurrently for different nodes; the other methods must
// not run concurrently with each other or with changes to the nodes.
type Evaluator struct {
	fw     k8sframework.Framework
	lister *lister
	images imageIndex
	// nodes is the cycle's node list, in the order SetNodes got it.
	nodes []*api.NodeInfo

	// signing: every plugin run can sign pods (signature.go).
	signing bool
	signers []fwk.SignPlugin
	// sameSigners are the signing plugins not asked, whose fragment one of
	// signers gives (withoutSameSigners).
	sameSigners []fwk.SignPlugin
	// spread, when topology spread runs, gives its default selector.
	spread *spreadListers
	// scorers and weights are the score plugins and their weights, for
	// KeptScores.
	scorers map[string]fwk.ScorePlugin
	weights map[string]int64
	// parallelism is Options.Parallelism: with 1, nodes are scored on the
	// caller's goroutine.
	parallelism int
	// scoreOrder names the score plugins in the order they run.
	scoreOrder []string
	// kept are filter verdicts and raw scores kept across cycles
	// (kept.go), unless fresh.
	kept  keptResults
	fresh bool
	// draView is the DRA manager the DynamicResources plugin reads; nil
	// when the plugin does not run (pods with claims are refused).
	draView *draView
	// draFilter is the DynamicResources plugin's filter, run again at
	// Reserve.
	draFilter fwk.FilterPlugin
	// draPreFilter is its PreFilter, run again to scope or unscope a pod's
	// allocator (slicescope.go).
	draPreFilter fwk.PreFilterPlugin
}

var _ framework.PodFit = &Evaluator{}

// New builds the plugins. ctx bounds the framework's background work
// (kube-scheduler's metric recorder); cancel it to release them.
func New(ctx context.Context, o Options) (*Evaluator, error) {
	if o.InformerFactory == nil {
		return nil, errors.New("podfit: Options.InformerFactory is required")
	}
	if o.ClientSet == nil {
		return nil, errors.New("podfit: Options.ClientSet is required")
	}
	gate := o.FeatureGate
	if gate == nil {
		gate = utilfeature.DefaultFeatureGate
	}
	parallelism := o.Parallelism
	if parallelism <= 0 {
		parallelism = parallelize.DefaultParallelism
	}
	profile, err := newProfile(o.Profile)
	if err != nil {
		return nil, err
	}
	// The framework instruments every plugin with kube-scheduler's metric
	// vectors, which exist only once registered. Register is idempotent
	// (guarded by the upstream package); the metrics land in
	// component-base's legacy registry, where Caldera may expose them.
	schedmetrics.Register()

	e := &Evaluator{lister: &lister{}, parallelism: parallelism, fresh: o.Fresh}
	var recorder events.EventRecorderLogger = discardEvents{}
	if o.EventRecorder != nil {
		recorder = o.EventRecorder
	}
	opts := []frameworkruntime.Option{
		frameworkruntime.WithClientSet(o.ClientSet),
		frameworkruntime.WithInformerFactory(o.InformerFactory),
		frameworkruntime.WithSnapshotSharedLister(e.lister),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(o.InformerFactory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithParallelism(parallelism),
		frameworkruntime.WithEventRecorder(recorder),
	}
	if o.Profile.DynamicResources {
		e.draView, err = newDRAManager(ctx, o.InformerFactory, o.ClientSet, gate)
		if err != nil {
			return nil, err
		}
		opts = append(opts, frameworkruntime.WithSharedDRAManager(e.draView))
	}
	captured := &signers{}
	e.fw, err = frameworkruntime.NewFramework(ctx, captured.wrap(newRegistry(plfeature.NewSchedulerFeaturesFromGates(gate))), profile, opts...)
	if err != nil {
		return nil, fmt.Errorf("podfit: building kube-scheduler's plugins: %w", err)
	}
	e.setUpSigning(captured.plugins, o.InformerFactory)
	for _, p := range captured.plugins {
		if f, ok := p.(fwk.FilterPlugin); ok && e.draView != nil && p.Name() == names.DynamicResources {
			e.draFilter = f
			e.draPreFilter, _ = p.(fwk.PreFilterPlugin)
		}
	}
	return e, nil
}

// Plugins lists the upstream plugins run at each extension point, in order.
func (e *Evaluator) Plugins() map[string][]string {
	p := e.fw.ListPlugins()
	out := map[string][]string{}
	for point, set := range map[string]config.PluginSet{
		"PreFilter": p.PreFilter, "Filter": p.Filter, "PreScore": p.PreScore,
		"Score": p.Score, "Reserve": p.Reserve, "PreBind": p.PreBind,
	} {
		for _, pl := range set.Enabled {
			out[point] = append(out[point], pl.Name)
		}
	}
	return out
}

// SetNodes gives the cycle's nodes. The plugins read the nodes' mirrors
// (kube-scheduler NodeInfos) in place: placements and removals the
// scheduler makes on the nodes afterwards are seen by the next PreFilter.
// Call it again when nodes are added, removed or replaced by copies. A node
// without a mirror gets one here. It also fills in each mirror's image
// states.
func (e *Evaluator) SetNodes(nodes []*api.NodeInfo) {
	e.nodes = nodes
	changed, same := e.lister.set(nodes)
	e.images.apply(nodes, changed, same)
}

// Release lets go of the cycle's nodes (framework.PodFit).
func (e *Evaluator) Release() {
	e.nodes = nil
	e.lister.release()
}

// PodState is one pod's state within a cycle: what PreFilter computed from
// the cluster, which Filter, Score, Reserve and PreBind read.
type PodState struct {
	pod   *corev1.Pod
	state *k8sframework.CycleState
	// allowed restricts the candidate nodes (nil: every node), as a
	// PreFilter plugin asked (NodeName, NodeAffinity's matchFields).
	allowed    sets.Set[string]
	notAllowed *framework.Status
	// assumed is the pod with its node set, once reserved.
	assumed *corev1.Pod
	// kept are the results kept for the pod's signature (nil when the
	// pod does not qualify), looked up once; changed is set when AddPod
	// or RemovePod changed the state.
	keptOnce sync.Once
	kept     *sigResults
	changed  bool
	// sign, when set, gives the pod's signature (a caller's cached one).
	sign func() (string, bool)
	// devicesFiltered is, per node, the DRA view's stamp when the DRA
	// filter last chose devices there for this pod.
	devicesMu       sync.Mutex
	devicesFiltered map[string]draStamp
	// scope is the nodes whose slices the pod's allocator was built over
	// (nil: every node); unscoped is the state with an allocator over
	// every slice, built when a node outside the scope is filtered.
	scope        sets.Set[string]
	unscopedOnce sync.Once
	unscoped     *k8sframework.CycleState
	unscopedErr  *framework.Status
}

// deviceScope returns the nodes an alike pod with claims will be filtered
// on, those its signature has no verdict kept for at their generation, or
// nil for every node: when the pod is not signed or most nodes are in it.
// It returns the signature's kept results too, which it looked up.
func (e *Evaluator) deviceScope(ctx context.Context, pod *corev1.Pod, sign func() (string, bool)) (sets.Set[string], *sigResults) {
	if e.draView == nil || e.draPreFilter == nil || len(pod.Spec.ResourceClaims) == 0 || e.fresh || e.lister.mayHaveAffinity() {
		return nil, nil
	}
	r := e.lookUpKept(ctx, &PodState{pod: pod, sign: sign})
	if r == nil {
		return nil, nil
	}
	m := &e.kept
	m.mu.Lock()
	defer m.mu.Unlock()
	nodes := e.lister.nodes
	if r.layout != e.lister.layout || len(r.filteredAt) != len(nodes) {
		return nil, r
	}
	scope := sets.New[string]()
	for i, n := range nodes {
		if at := r.filteredAt[i]; at == 0 || at != n.Generation {
			scope.Insert(n.Node().Name)
			if 2*len(scope) > len(nodes) {
				return nil, r
			}
		}
	}
	return scope, r
}

// unscopedState returns the pod's state with its allocator over every
// slice, built once.
func (e *Evaluator) unscopedState(ctx context.Context, s *PodState) (*k8sframework.CycleState, *framework.Status) {
	s.unscopedOnce.Do(func() {
		state := s.state.Clone().(*k8sframework.CycleState)
		if _, st := e.draPreFilter.PreFilter(ctx, state, s.pod, nil); !st.IsSuccess() {
			s.unscopedErr = fromUpstream(st)
			return
		}
		s.unscoped = state
	})
	return s.unscoped, s.unscopedErr
}

// scopeTo builds the pod's allocator again over the slices of the nodes,
// in the pod's own state; Reserve does so for a node outside the scope.
func (e *Evaluator) scopeTo(ctx context.Context, s *PodState, nodes sets.Set[string]) *framework.Status {
	var st *fwk.Status
	e.draView.slices.within(nodes, func() { _, st = e.draPreFilter.PreFilter(ctx, s.state, s.pod, nil) })
	if !st.IsSuccess() {
		return fromUpstream(st)
	}
	s.scope = nodes
	return nil
}

// devicesChosen reports whether the DRA filter chose devices on the node
// for this pod, with the devices as they are at stamp.
func (s *PodState) devicesChosen(node string, stamp draStamp) bool {
	s.devicesMu.Lock()
	defer s.devicesMu.Unlock()
	at, ok := s.devicesFiltered[node]
	return ok && at == stamp
}

// Pod returns the pod the state is for.
func (s *PodState) Pod() *corev1.Pod { return s.pod }

// NodeNames returns the only nodes the pod may go to, sorted, or nil when
// PreFilter did not restrict them.
func (s *PodState) NodeNames() []string {
	if s.allowed == nil {
		return nil
	}
	return sets.List(s.allowed)
}

// Allows reports whether PreFilter left the node as a candidate.
func (s *PodState) Allows(nodeName string) bool {
	return s.allowed == nil || s.allowed.Has(nodeName)
}

// PreFilter computes the pod's state against the current nodes. A non-nil
// status means the pod fits no node (and the PodState is nil): the status
// is then every node's reason.
func (e *Evaluator) PreFilter(ctx context.Context, pod *corev1.Pod, sign func() (string, bool)) (framework.PodFitState, *framework.Status) {
	if len(pod.Spec.ResourceClaims) > 0 && e.draView == nil {
		// kube-scheduler's DynamicResources plugin is not run; refusing is
		// better than placing the pod as if it had no claims.
		return nil, &framework.Status{Plugin: names.DynamicResources, Code: framework.UnschedulableAndUnresolvable,
			Reasons: []string{"pod has resource claims, and the predicates plugin's dynamicResourceAllocation (Volcano's predicate.DynamicResourceAllocationEnable) is off"}}
	}
	state := k8sframework.NewCycleState()
	scope, kept := e.deviceScope(ctx, pod, sign)
	var result *fwk.PreFilterResult
	var st *fwk.Status
	var restricting sets.Set[string]
	if scope != nil {
		e.draView.slices.within(scope, func() { result, st, restricting = e.fw.RunPreFilterPlugins(ctx, state, pod) })
	} else {
		result, st, restricting = e.fw.RunPreFilterPlugins(ctx, state, pod)
	}
	if !st.IsSuccess() {
		s := fromUpstream(st)
		if s.Plugin == "" && restricting.Len() > 0 {
			s.Plugin = strings.Join(sets.List(restricting), ",")
		}
		return nil, s
	}
	s := &PodState{pod: pod, state: state, scope: scope, sign: sign}
	if kept != nil {
		// Looked up already: keptFor need not sign the pod again.
		s.keptOnce.Do(func() { s.kept = kept })
	}
	if !result.AllNodes() {
		s.allowed = result.NodeNames
		s.notAllowed = &framework.Status{
			Plugin:  strings.Join(sets.List(restricting), ","),
			Code:    framework.UnschedulableAndUnresolvable,
			Reasons: []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(restricting))},
		}
	}
	return s, nil
}

// Filter reports whether the pod fits the node: nil when it does, else the
// first plugin that rejected it and its reasons.
func (e *Evaluator) Filter(ctx context.Context, fs framework.PodFitState, node *api.NodeInfo) *framework.Status {
	s := fs.(*PodState)
	if s.allowed != nil && !s.allowed.Has(node.Name) {
		return s.notAllowed
	}
	r := e.keptFor(ctx, s)
	if r != nil {
		if st, ok := e.keptFilter(r, node); ok {
			return st
		}
	}
	info := nodeInfoOf(node)
	generation := info.Generation
	var stamp draStamp
	devices := e.draView != nil && len(s.pod.Spec.ResourceClaims) > 0
	if devices {
		stamp = e.draView.stamp()
	}
	state := s.state
	if s.scope != nil && !s.scope.Has(node.Name) {
		// Devices chosen with another state are not Reserve's to take.
		devices = false
		var st *framework.Status
		if state, st = e.unscopedState(ctx, s); st != nil {
			return st
		}
	}
	st := devicesResolvable(fromUpstream(e.fw.RunFilterPlugins(ctx, state, s.pod, info)))
	if r != nil {
		e.keepFilter(r, node, generation, st)
	}
	if devices && st == nil {
		s.devicesMu.Lock()
		if s.devicesFiltered == nil {
			s.devicesFiltered = map[string]draStamp{}
		}
		s.devicesFiltered[node.Name] = stamp
		s.devicesMu.Unlock()
	}
	return st
}

// FilterWithout reports whether the pod would fit the node if the victims
// (pods on that node) were gone: the PreFilter state and the node are
// copied, the victims removed from both, and the filters run, as
// kube-scheduler does when it looks for preemption victims. With DRA, the
// devices of claims that only victims use count as free: the pod's
// PreFilter runs again without them.
func (e *Evaluator) FilterWithout(ctx context.Context, fs framework.PodFitState, node *api.NodeInfo, victims []*corev1.Pod) *framework.Status {
	s := fs.(*PodState)
	if s.allowed != nil && !s.allowed.Has(node.Name) {
		return s.notAllowed
	}
	state := s.state
	if s.scope != nil && !s.scope.Has(node.Name) {
		var st *framework.Status
		if state, st = e.unscopedState(ctx, s); st != nil {
			return st
		}
	}
	state = state.Clone().(*k8sframework.CycleState)
	if e.draView != nil && len(s.pod.Spec.ResourceClaims) > 0 {
		if freed := e.draView.claims.freedBy(victims); len(freed) > 0 {
			var st *fwk.Status
			state = k8sframework.NewCycleState()
			e.draView.claims.without(freed, func() { _, st, _ = e.fw.RunPreFilterPlugins(ctx, state, s.pod) })
			if !st.IsSuccess() {
				return fromUpstream(st)
			}
		}
	}
	ni := nodeInfoOf(node).SnapshotConcrete()
	logger := klog.FromContext(ctx)
	for _, v := range victims {
		info, err := k8sframework.NewPodInfo(v)
		if err != nil {
			return errorStatus("", err)
		}
		if st := e.fw.RunPreFilterExtensionRemovePod(ctx, state, s.pod, info, ni); !st.IsSuccess() {
			return fromUpstream(st)
		}
		if err := ni.RemovePod(logger, v); err != nil {
			return errorStatus("", err)
		}
	}
	st := e.fw.RunFilterPlugins(ctx, state, s.pod, ni)
	if st == nil {
		return nil
	}
	return fromUpstream(st)
}

// Score returns the pod's weighted total score on each node, normalised
// across the given nodes as kube-scheduler does: pass the nodes that passed
// Filter. It runs the same plugins, normalisers and weights as the
// framework's RunScorePlugins, through KeepScores, so that raw scores kept
// across cycles are used (and, with parallelism 1, no goroutine is
// started: RunScorePlugins starts them even for one worker).
func (e *Evaluator) Score(ctx context.Context, s framework.PodFitState, nodes []*api.NodeInfo) ([]int64, error) {
	k, err := e.KeepScores(ctx, s, nodes)
	if err != nil {
		return nil, err
	}
	return k.Totals(ctx, make([]int64, 0, len(nodes)))
}

// Reserve tells the plugins that the pod goes to the node (VolumeBinding
// assumes the pod's claims bound there, so the next pods see it). On
// failure the reservation is undone.
func (e *Evaluator) Reserve(ctx context.Context, fs framework.PodFitState, nodeName string) *framework.Status {
	s := fs.(*PodState)
	if s.assumed != nil {
		return errorStatus("", fmt.Errorf("pod %s/%s is already reserved on %s", s.pod.Namespace, s.pod.Name, s.assumed.Spec.NodeName))
	}
	if e.draFilter != nil && len(s.pod.Spec.ResourceClaims) > 0 && !s.devicesChosen(nodeName, e.draView.stamp()) {
		// Reserve takes the devices the filter chose on the node for this
		// pod; a node chosen from an alike pod's results was not filtered
		// for it, and devices may have been taken or freed since it was.
		info, err := e.lister.Get(nodeName)
		if err != nil {
			return errorStatus("", err)
		}
		if s.scope != nil && !s.scope.Has(nodeName) {
			if st := e.scopeTo(ctx, s, sets.New(nodeName)); st != nil {
				return st
			}
		}
		if st := e.draFilter.Filter(ctx, s.state, s.pod, info); !st.IsSuccess() {
			return fromUpstream(st)
		}
	}
	// As kube-scheduler does: the reserve and bind plugins see the pod
	// with its node set.
	assumed := s.pod.DeepCopy()
	assumed.Spec.NodeName = nodeName
	if st := e.fw.RunReservePluginsReserve(ctx, s.state, assumed, nodeName); !st.IsSuccess() {
		e.fw.RunReservePluginsUnreserve(ctx, s.state, assumed, nodeName)
		return fromUpstream(st)
	}
	s.assumed = assumed
	return nil
}

// Unreserve undoes Reserve, for a gang that is discarded or a bind that
// failed. Unreserving a pod that is not reserved does nothing.
func (e *Evaluator) Unreserve(ctx context.Context, fs framework.PodFitState) {
	s := fs.(*PodState)
	if s.assumed == nil {
		return
	}
	e.fw.RunReservePluginsUnreserve(ctx, s.state, s.assumed, s.assumed.Spec.NodeName)
	s.assumed = nil
	if e.draView != nil && len(s.pod.Spec.ResourceClaims) > 0 {
		// Devices came free without an event: results kept for alike
		// pods end.
		e.draView.epoch.Add(1)
	}
}

// PreBind does what must happen before the pod is bound to the node it was
// reserved on: VolumeBinding binds its claims to volumes, or asks for them
// to be provisioned there, and waits until they are bound. It blocks up to
// VolumeBinding's bind timeout; run it on the binder's goroutines. The pod
// must exist in the informer factory's pod cache (VolumeBinding stops
// waiting once the pod is deleted).
func (e *Evaluator) PreBind(ctx context.Context, fs framework.PodFitState, nodeName string) *framework.Status {
	s := fs.(*PodState)
	if s.assumed == nil || s.assumed.Spec.NodeName != nodeName {
		return errorStatus("", fmt.Errorf("pod %s/%s is not reserved on %s", s.pod.Namespace, s.pod.Name, nodeName))
	}
	st := e.fw.RunPreBindPreFlights(ctx, s.state, s.assumed, nodeName)
	if st.IsSkip() {
		return nil
	}
	if !st.IsSuccess() {
		return fromUpstream(st)
	}
	return fromUpstream(e.fw.RunPreBindPlugins(ctx, s.state, s.assumed, nodeName))
}

// AddPod updates the pod's PreFilter state as if other were added to the
// node (it does not change the node). With RemovePod it lets preemption
// ask "would the pod fit if these pods were gone" without a new PreFilter.
func (e *Evaluator) AddPod(ctx context.Context, fs framework.PodFitState, other *corev1.Pod, node *api.NodeInfo) *framework.Status {
	s := fs.(*PodState)
	info, err := k8sframework.NewPodInfo(other)
	if err != nil {
		return errorStatus("", err)
	}
	s.changed = true
	return fromUpstream(e.fw.RunPreFilterExtensionAddPod(ctx, s.state, s.pod, info, nodeInfoOf(node)))
}

// RemovePod updates the pod's PreFilter state as if other were removed
// from the node (it does not change the node).
func (e *Evaluator) RemovePod(ctx context.Context, fs framework.PodFitState, other *corev1.Pod, node *api.NodeInfo) *framework.Status {
	s := fs.(*PodState)
	info, err := k8sframework.NewPodInfo(other)
	if err != nil {
		return errorStatus("", err)
	}
	s.changed = true
	return fromUpstream(e.fw.RunPreFilterExtensionRemovePod(ctx, s.state, s.pod, info, nodeInfoOf(node)))
}

// Feasible returns the nodes (in SetNodes order) the pod fits, and for each
// other node why not. It is PreFilter and Filter over every node.
func (e *Evaluator) Feasible(ctx context.Context, pod *corev1.Pod) ([]string, map[string]*framework.Status) {
	failed := map[string]*framework.Status{}
	s, st := e.PreFilter(ctx, pod, nil)
	if st != nil {
		for _, n := range e.nodes {
			failed[n.Name] = st
		}
		return nil, failed
	}
	var fit []string
	for _, n := range e.nodes {
		if st := e.Filter(ctx, s, n); st != nil {
			failed[n.Name] = st
			continue
		}
		fit = append(fit, n.Name)
	}
	return fit, failed
}

// Close releases the plugins.
func (e *Evaluator) Close() error {
	return e.fw.Close()
}
