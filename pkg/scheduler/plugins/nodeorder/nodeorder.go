// Package nodeorder scores nodes with kube-scheduler's own score plugins
// (resource allocation and balance, node affinity, inter-pod affinity,
// taint toleration, topology spread, image locality), weighted as the
// configuration says (Volcano's nodeorder weights).
package nodeorder

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/predicates"
)

// Name is the plugin's name in the configuration.
const Name = "nodeorder"

// Plugin is the nodeorder plugin.
type Plugin struct {
	fit framework.PodFit
	ssn *framework.Session
}

var (
	_ framework.SessionPlugin     = &Plugin{}
	_ framework.NodeScorePlugin   = &Plugin{}
	_ framework.ScoreKeeperPlugin = &Plugin{}
	_ framework.SignerPlugin      = &Plugin{}
)

// New builds the plugin. Its arguments (the score weights) shape the
// evaluator the handle carries; here they are only validated.
func New(args any, h *framework.Handle) (framework.Plugin, error) {
	switch a := args.(type) {
	case nil:
	case *configv1alpha1.NodeOrderArgs:
		if errs := a.Validate(field.NewPath("args")); len(errs) > 0 {
			return nil, fmt.Errorf("plugin %s: %w", Name, errs.ToAggregate())
		}
	default:
		return nil, fmt.Errorf("plugin %s: arguments of type %T, want *NodeOrderArgs", Name, args)
	}
	if h == nil || h.PodFit == nil {
		return nil, fmt.Errorf("plugin %s needs the pod evaluator, which the scheduler did not provide", Name)
	}
	return &Plugin{fit: h.PodFit}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen remembers the cycle; the predicates plugin (or the first
// score) gives the evaluator the nodes.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	p.ssn = ssn
	p.fit.SetNodes(ssn.Snapshot.NodeList)
}

// OnSessionClose forgets the cycle; the evaluator lets go of its nodes.
func (p *Plugin) OnSessionClose(*framework.Session) {
	p.fit.Release()
	p.ssn = nil
}

// ScoreNodes adds kube-scheduler's weighted, normalised scores.
func (p *Plugin) ScoreNodes(t *api.TaskInfo, nodes []*api.NodeInfo, scores []float64) {
	s, st := predicates.PodState(p.ssn, p.fit, t)
	if st != nil {
		return
	}
	got, err := p.fit.Score(p.ssn.Ctx, s, nodes)
	if err != nil {
		p.ssn.Logger.Error(err, "Scoring nodes failed", "pod", t.Namespace+"/"+t.Name)
		return
	}
	for i, v := range got {
		scores[i] += float64(v)
	}
}

// Signature signs the task as kube-scheduler's plugins do.
func (p *Plugin) Signature(t *api.TaskInfo) (string, bool) {
	return predicates.Signature(p.ssn, p.fit, t)
}

// KeepScores scores the nodes and keeps the raw scores for the next alike
// tasks.
func (p *Plugin) KeepScores(t *api.TaskInfo, nodes []*api.NodeInfo) (framework.KeptScores, error) {
	s, st := predicates.PodState(p.ssn, p.fit, t)
	if st != nil {
		return nil, fmt.Errorf("pod %s/%s: %s", t.Namespace, t.Name, st.Message())
	}
	k, err := p.fit.KeepScores(p.ssn.Ctx, s, nodes)
	if err != nil {
		return nil, err
	}
	return &kept{k: k, ssn: p.ssn}, nil
}

type kept struct {
	k      framework.PodFitScores
	ssn    *framework.Session
	totals []int64
}

func (k *kept) Update(i int, n *api.NodeInfo) error { return k.k.Update(k.ssn.Ctx, i, n) }
func (k *kept) Remove(i int)                        { k.k.Remove(i) }

func (k *kept) AddTo(scores []float64) error {
	var err error
	if k.totals, err = k.k.Totals(k.ssn.Ctx, k.totals); err != nil {
		return err
	}
	for i, v := range k.totals {
		scores[i] += float64(v)
	}
	return nil
}
