// Package binpack scores nodes higher the fuller they would be after placing
// a task, weighted per resource, so that work packs onto few nodes and whole
// nodes stay free for large jobs.
package binpack

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/pluginargs"
)

// Name is the plugin's name in the configuration.
const Name = "binpack"

// MaxNodeScore is the score of a node the task would fill exactly.
const MaxNodeScore = 100

// Plugin is the binpack plugin.
type Plugin struct {
	weight  float64
	weights map[corev1.ResourceName]float64
	order   []corev1.ResourceName
}

var (
	_ framework.NodeScorePlugin   = &Plugin{}
	_ framework.ScoreKeeperPlugin = &Plugin{}
	_ framework.SignerPlugin      = &Plugin{}
)

// New builds the plugin from *BinpackArgs (nil means the defaults).
func New(args any, _ *framework.Handle) (framework.Plugin, error) {
	a, err := argsOf(args)
	if err != nil {
		return nil, err
	}
	p := &Plugin{weight: float64(*a.Weight), weights: map[corev1.ResourceName]float64{
		corev1.ResourceCPU:    float64(*a.CPU),
		corev1.ResourceMemory: float64(*a.Memory),
	}}
	for name, w := range a.Resources {
		p.weights[name] = float64(w)
	}
	// A fixed order keeps the float sums, and so ties, the same each run.
	p.order = slices.Sorted(maps.Keys(p.weights))
	return p, nil
}

func argsOf(args any) (*configv1alpha1.BinpackArgs, error) {
	return pluginargs.Typed[configv1alpha1.BinpackArgs](Name, args)
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// ScoreNodes adds each node's weighted fullness after placing the task.
func (p *Plugin) ScoreNodes(t *api.TaskInfo, nodes []*api.NodeInfo, scores []float64) {
	if p.weight == 0 {
		return
	}
	for i, n := range nodes {
		scores[i] += p.weight * p.score(t, n)
	}
}

// score is the weighted mean, over the resources the task requests and the
// plugin weighs, of how full the node would be, in [0, MaxNodeScore]; 0 when
// the task would not fit.
func (p *Plugin) score(t *api.TaskInfo, n *api.NodeInfo) float64 {
	var sum, weights float64
	for _, name := range p.order {
		w := p.weights[name]
		req := t.Resreq.Get(name)
		if w == 0 || req == 0 {
			continue
		}
		capacity := n.Allocatable.Get(name)
		used := n.Used.Get(name) + req
		if capacity == 0 || used > capacity {
			return 0
		}
		sum += w * float64(used) / float64(capacity)
		weights += w
	}
	if weights == 0 {
		return 0
	}
	return sum / weights * MaxNodeScore
}

// Signature: a node's score depends on the task's request alone, which the
// session's signature already holds.
func (p *Plugin) Signature(*api.TaskInfo) (string, bool) { return "", true }

// KeepScores keeps the nodes' scores; each depends on its node alone.
func (p *Plugin) KeepScores(t *api.TaskInfo, nodes []*api.NodeInfo) (framework.KeptScores, error) {
	return framework.NodeLocalScores(p, t, nodes), nil
}
