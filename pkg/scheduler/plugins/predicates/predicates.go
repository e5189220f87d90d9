// Package predicates filters nodes for a task with kube-scheduler's own
// filter plugins (node affinity, taints, ports, resources, volumes, topology
// spread, inter-pod affinity), so that a pod's constraints mean exactly what
// they mean to kube-scheduler. It also reserves a placed pod's volumes and
// binds them before the pod is bound. With the proportional predicate it
// keeps CPU and memory free for idle scarce resources.
package predicates

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/proportional"
)

// Name is the plugin's name in the configuration.
const Name = "predicates"

// stateKey holds each task's kube-scheduler PreFilter state for the cycle.
var stateKey = framework.NewStateKey[map[types.UID]framework.PodFitState]("predicates/podState")

// signatureKey holds each task's signature for the cycle.
var signatureKey = framework.NewStateKey[map[types.UID]signature]("predicates/signature")

type signature struct {
	sig string
	ok  bool
}

// Plugin is the predicates plugin.
type Plugin struct {
	fit framework.PodFit
	ssn *framework.Session
	// reserve is the proportional predicate's; nil without it.
	reserve *proportional.Reserve

	// reserved holds the state of placed pods until they are bound, across
	// cycles: the binder's PreBind needs it.
	mu       sync.Mutex
	reserved map[types.UID]framework.PodFitState
}

var (
	_ framework.SessionPlugin         = &Plugin{}
	_ framework.PrePredicatePlugin    = &Plugin{}
	_ framework.PredicatePlugin       = &Plugin{}
	_ framework.SignerPlugin          = &Plugin{}
	_ framework.VictimPredicatePlugin = &Plugin{}
	_ framework.EventHandlerPlugin    = &Plugin{}
	_ framework.PreBindPlugin         = &Plugin{}
)

// New builds the plugin. Its arguments (which kube-scheduler filters run)
// shape the evaluator the handle carries; here they are only validated.
func New(args any, h *framework.Handle) (framework.Plugin, error) {
	var reserve *proportional.Reserve
	switch a := args.(type) {
	case nil:
	case *configv1alpha1.PredicatesArgs:
		if errs := a.Validate(field.NewPath("args")); len(errs) > 0 {
			return nil, fmt.Errorf("plugin %s: %w", Name, errs.ToAggregate())
		}
		if a.Proportional != nil {
			reserve = proportional.New("predicate proportional", a.Proportional.Resources)
		}
	default:
		return nil, fmt.Errorf("plugin %s: arguments of type %T, want *PredicatesArgs", Name, args)
	}
	if h == nil || h.PodFit == nil {
		return nil, fmt.Errorf("plugin %s needs the pod evaluator, which the scheduler did not provide", Name)
	}
	return &Plugin{fit: h.PodFit, reserve: reserve, reserved: map[types.UID]framework.PodFitState{}}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen gives the evaluator the cycle's nodes.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	p.ssn = ssn
	p.fit.SetNodes(ssn.Snapshot.NodeList)
	framework.WriteState(ssn, stateKey, map[types.UID]framework.PodFitState{})
}

// OnSessionClose forgets the cycle. A pipelined task is not bound: what
// was reserved for it goes, or its claims would stay in flight and the
// next cycle could not place it again. The evaluator lets go of the
// cycle's nodes.
func (p *Plugin) OnSessionClose(ssn *framework.Session) {
	p.mu.Lock()
	held := len(p.reserved) > 0
	p.mu.Unlock()
	if held {
		for _, j := range ssn.Snapshot.Jobs {
			for t := range j.TasksIn(api.Pipelined) {
				p.Unreserve(ssn.Ctx, t)
			}
		}
	}
	p.fit.Release()
	p.ssn = nil
}

// PodState returns a task's PreFilter state for the cycle, computing it when
// the predicates plugin has not (yet) done so. Other plugins (nodeorder) use
// it to score with the same state.
func PodState(ssn *framework.Session, fit framework.PodFit, t *api.TaskInfo) (framework.PodFitState, *framework.Status) {
	states, ok := framework.ReadState(ssn, stateKey)
	if !ok {
		states = map[types.UID]framework.PodFitState{}
		framework.WriteState(ssn, stateKey, states)
	}
	if s := states[t.UID]; s != nil {
		return s, nil
	}
	s, st := fit.PreFilter(ssn.Ctx, t.Pod, func() (string, bool) { return Signature(ssn, fit, t) })
	if st == nil {
		states[t.UID] = s
	}
	return s, st
}

// Signature returns the task's pod signature for the cycle, computing it
// once: pods alike to kube-scheduler's plugins (see framework.PodFit).
func Signature(ssn *framework.Session, fit framework.PodFit, t *api.TaskInfo) (string, bool) {
	sigs, ok := framework.ReadState(ssn, signatureKey)
	if !ok {
		sigs = map[types.UID]signature{}
		framework.WriteState(ssn, signatureKey, sigs)
	}
	s, ok := sigs[t.UID]
	if !ok {
		s.sig, s.ok = fit.Signature(ssn.Ctx, t.Pod)
		sigs[t.UID] = s
	}
	return s.sig, s.ok
}

// Signature signs the task as kube-scheduler's plugins do.
func (p *Plugin) Signature(t *api.TaskInfo) (string, bool) { return Signature(p.ssn, p.fit, t) }

// PrePredicate computes the task's state afresh: placements made since its
// last attempt change what inter-pod affinity and topology spread allow.
func (p *Plugin) PrePredicate(t *api.TaskInfo) *framework.Status {
	if states, ok := framework.ReadState(p.ssn, stateKey); ok {
		delete(states, t.UID)
	}
	_, st := PodState(p.ssn, p.fit, t)
	return st
}

// Predicate runs kube-scheduler's filters for the task on the node.
func (p *Plugin) Predicate(t *api.TaskInfo, n *api.NodeInfo) *framework.Status {
	s, st := PodState(p.ssn, p.fit, t)
	if st != nil {
		return st
	}
	if !s.Allows(n.Name) {
		return &framework.Status{Plugin: "PreFilter", Reasons: []string{"node(s) didn't satisfy plugin(s) PreFilter result"}, Code: framework.UnschedulableAndUnresolvable}
	}
	if st := p.fit.Filter(p.ssn.Ctx, s, n); st != nil {
		return st
	}
	return p.proportional(t, n, nil)
}

// proportional is the proportional predicate's verdict, freed added to
// the node's idle resources.
func (p *Plugin) proportional(t *api.TaskInfo, n *api.NodeInfo, freed *api.Resource) *framework.Status {
	if reason := p.reserve.Check(t, n, freed); reason != "" {
		return &framework.Status{Plugin: "Proportional", Reasons: []string{reason}}
	}
	return nil
}

// PredicateWithout runs kube-scheduler's filters for the task on the node
// as if the victims were gone.
func (p *Plugin) PredicateWithout(t *api.TaskInfo, n *api.NodeInfo, victims []*api.TaskInfo) *framework.Status {
	s, st := PodState(p.ssn, p.fit, t)
	if st != nil {
		return st
	}
	pods := make([]*corev1.Pod, len(victims))
	for i, v := range victims {
		pods[i] = v.Pod
	}
	if st := p.fit.FilterWithout(p.ssn.Ctx, s, n, pods); st != nil {
		return st
	}
	return p.proportional(t, n, proportional.Freed(victims))
}

// OnAllocate reserves the placed pod's volumes on its node, so the next
// pods see them taken.
func (p *Plugin) OnAllocate(t *api.TaskInfo) {
	p.fit.NotePlaced(t.Pod)
	s, st := PodState(p.ssn, p.fit, t)
	if st != nil {
		return
	}
	if st := p.fit.Reserve(p.ssn.Ctx, s, t.NodeName); st != nil {
		p.ssn.Logger.Info("Reserving volumes and devices failed", "pod", t.Namespace+"/"+t.Name, "node", t.NodeName, "status", st.Message())
		return
	}
	p.mu.Lock()
	p.reserved[t.UID] = s
	p.mu.Unlock()
	// The state lives on in reserved until the bind, and no longer in the
	// cycle's: what it holds for every node it was filtered on (DRA keeps
	// a node's device allocation from each Filter) would otherwise stay
	// until the cycle ends, for every pod the cycle places.
	if states, ok := framework.ReadState(p.ssn, stateKey); ok {
		delete(states, t.UID)
	}
}

// OnDeallocate releases an undone placement's reservation.
func (p *Plugin) OnDeallocate(t *api.TaskInfo) {
	p.Unreserve(p.ssn.Ctx, t)
}

// PreBind binds the pod's volumes on its node before the pod is bound.
func (p *Plugin) PreBind(ctx context.Context, t *api.TaskInfo, node string) error {
	p.mu.Lock()
	s := p.reserved[t.UID]
	delete(p.reserved, t.UID)
	p.mu.Unlock()
	if s == nil {
		if t.Pod != nil && len(t.Pod.Spec.ResourceClaims) > 0 {
			// Its claims' devices were not reserved on the node (OnAllocate
			// logged why): bound, the pod would hold no devices.
			return fmt.Errorf("pod %s/%s has resource claims and none was reserved on %s", t.Namespace, t.Name, node)
		}
		return nil
	}
	if st := p.fit.PreBind(ctx, s, node); st != nil {
		p.fit.Unreserve(ctx, s)
		return errors.New(st.Message())
	}
	return nil
}

// Unreserve releases what was reserved for the pod.
func (p *Plugin) Unreserve(ctx context.Context, t *api.TaskInfo) {
	p.mu.Lock()
	s := p.reserved[t.UID]
	delete(p.reserved, t.UID)
	p.mu.Unlock()
	if s != nil {
		p.fit.Unreserve(ctx, s)
	}
}
