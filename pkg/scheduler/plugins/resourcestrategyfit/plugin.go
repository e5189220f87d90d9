// Package resourcestrategyfit scores nodes per resource: resources scored
// MostAllocated pack (a node scores higher the fuller the task would leave
// it), resources scored LeastAllocated spread (higher the emptier). GPU
// workers can so be packed to keep whole GPU nodes free while CPU-only
// masters spread to avoid hot spots.
//
// A node's score is the weighted mean, over the resources the task
// requests that have a strategy, of each resource's score in [0, 100],
// times the plugin's weight. A resource takes its exact entry in the
// configuration, else the longest prefix entry ("nvidia.com/*") it
// matches; resources that match none do not count. A pod may choose its
// own: volcano.sh/resource-strategy-scoring-type sets the strategy of
// every resource, volcano.sh/resource-strategy-weight (a JSON object of
// resource name to weight) the resources and their weights.
//
// Scarce-resource avoidance (sra) keeps tasks that do not need a scarce
// resource (a GPU model) off the nodes that have it. With the retention
// policy nodes score higher the more of the scarce resources they lack
// that the task does not ask for; with the proportional policy a node is
// filtered out when placing the task would leave less CPU or memory than
// the node's idle scarce units need, unless the task asks for a scarce
// resource itself.
package resourcestrategyfit

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/pluginargs"
	"github.com/caldera-sh/caldera/pkg/scheduler/plugins/internal/proportional"
)

// Name is the plugin's name in the configuration.
const Name = "resource-strategy-fit"

// MaxNodeScore is the most one resource scores, and the most the mean of
// the task's resources does, before the plugin's weight.
const MaxNodeScore = 100

// Pod annotations that override the configured strategies.
const (
	// ScoringTypeAnnotation sets the strategy of every resource of the
	// pod: MostAllocated or LeastAllocated.
	ScoringTypeAnnotation = "volcano.sh/resource-strategy-scoring-type"
	// WeightAnnotation sets the resources that count for the pod and their
	// weights, as a JSON object: {"nvidia.com/gpu": 5, "cpu": 1}.
	WeightAnnotation = "volcano.sh/resource-strategy-weight"
)

// Plugin is the resource-strategy-fit plugin.
type Plugin struct {
	weight float64
	global *strategies

	retention *retention
	// reserve holds the proportional policy's reservations per scarce
	// resource; nil without it.
	reserve *proportional.Reserve

	// plans holds each task's strategies for the cycle, from its
	// annotations or the configuration.
	plans map[api.TaskID]*plan
}

// strategy is one resource's.
type strategy struct {
	most   bool
	weight float64
}

// strategies resolve a resource name to its strategy.
type strategies struct {
	exact map[corev1.ResourceName]strategy
	// prefixes are the entries ending in "*", longest first.
	prefixes []prefixStrategy
}

type prefixStrategy struct {
	prefix string
	strategy
}

func (s *strategies) of(name corev1.ResourceName) (strategy, bool) {
	if st, ok := s.exact[name]; ok {
		return st, true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(string(name), p.prefix) {
			return p.strategy, true
		}
	}
	return strategy{}, false
}

type retention struct {
	weight    float64
	resources []corev1.ResourceName
	weights   map[corev1.ResourceName]float64
	sum       float64
}

// plan is one task's scoring: the resources that count, with their
// strategies, or why its annotations are invalid.
type plan struct {
	resources []corev1.ResourceName
	strats    []strategy
	invalid   string
}

var (
	_ framework.SessionPlugin         = &Plugin{}
	_ framework.PrePredicatePlugin    = &Plugin{}
	_ framework.PredicatePlugin       = &Plugin{}
	_ framework.VictimPredicatePlugin = &Plugin{}
	_ framework.NodeScorePlugin       = &Plugin{}
	_ framework.ScoreKeeperPlugin     = &Plugin{}
	_ framework.SignerPlugin          = &Plugin{}
)

// New builds the plugin from *ResourceStrategyFitArgs (nil means the
// defaults).
func New(args any, _ *framework.Handle) (framework.Plugin, error) {
	a, err := pluginargs.Typed[configv1alpha1.ResourceStrategyFitArgs](Name, args)
	if err != nil {
		return nil, err
	}
	p := &Plugin{weight: float64(*a.Weight), global: &strategies{exact: map[corev1.ResourceName]strategy{}}}
	for name, rs := range a.Resources {
		st := strategy{most: rs.Type == configv1alpha1.MostAllocated, weight: float64(*rs.Weight)}
		if prefix, ok := strings.CutSuffix(name, "*"); ok {
			p.global.prefixes = append(p.global.prefixes, prefixStrategy{prefix: prefix, strategy: st})
		} else {
			p.global.exact[corev1.ResourceName(name)] = st
		}
	}
	slices.SortFunc(p.global.prefixes, func(x, y prefixStrategy) int {
		if len(x.prefix) != len(y.prefix) {
			return len(y.prefix) - len(x.prefix)
		}
		return strings.Compare(x.prefix, y.prefix)
	})
	if s := a.SRA; s != nil {
		switch s.Policy {
		case configv1alpha1.SRARetention:
			r := &retention{weight: float64(*s.RetentionWeight), weights: map[corev1.ResourceName]float64{}}
			for _, name := range slices.Sorted(maps.Keys(s.Resources)) {
				r.resources = append(r.resources, name)
				r.weights[name] = float64(s.Resources[name])
				r.sum += float64(s.Resources[name])
			}
			p.retention = r
		case configv1alpha1.SRAProportional:
			p.reserve = proportional.New("sra proportional", s.Proportional)
		}
	}
	return p, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return Name }

// OnSessionOpen starts the cycle's plans.
func (p *Plugin) OnSessionOpen(*framework.Session) { p.plans = map[api.TaskID]*plan{} }

// OnSessionClose drops them.
func (p *Plugin) OnSessionClose(*framework.Session) { p.plans = nil }

// planOf returns the task's plan, made on first use in the cycle.
func (p *Plugin) planOf(t *api.TaskInfo) *plan {
	if pl, ok := p.plans[t.UID]; ok {
		return pl
	}
	pl := p.makePlan(t)
	if p.plans != nil {
		p.plans[t.UID] = pl
	}
	return pl
}

func (p *Plugin) makePlan(t *api.TaskInfo) *plan {
	strats := p.global
	var annotations map[string]string
	if t.Pod != nil {
		annotations = t.Pod.Annotations
	}
	var override *bool
	if v, ok := annotations[ScoringTypeAnnotation]; ok {
		switch configv1alpha1.ScoringStrategy(v) {
		case configv1alpha1.MostAllocated:
			override = new(true)
		case configv1alpha1.LeastAllocated:
			override = new(false)
		default:
			return &plan{invalid: fmt.Sprintf("annotation %s: %q is neither %s nor %s",
				ScoringTypeAnnotation, v, configv1alpha1.MostAllocated, configv1alpha1.LeastAllocated)}
		}
	}
	if v, ok := annotations[WeightAnnotation]; ok {
		var weights map[string]float64
		if err := json.Unmarshal([]byte(v), &weights); err != nil {
			return &plan{invalid: fmt.Sprintf(`annotation %s: want a JSON object of resource name to weight, like {"cpu": 1}: %v`, WeightAnnotation, err)}
		}
		own := &strategies{exact: map[corev1.ResourceName]strategy{}}
		for _, name := range slices.Sorted(maps.Keys(weights)) {
			w := weights[name]
			if w < 0 {
				return &plan{invalid: fmt.Sprintf("annotation %s: weight of %s is %v, must not be negative", WeightAnnotation, name, w)}
			}
			st, ok := p.global.of(corev1.ResourceName(name))
			if !ok {
				st.most = false
			}
			st.weight = w
			own.exact[corev1.ResourceName(name)] = st
		}
		strats = own
	}
	pl := &plan{}
	for _, name := range t.Resreq.Names() {
		if name == corev1.ResourcePods {
			continue
		}
		st, ok := strats.of(name)
		if !ok || st.weight == 0 {
			continue
		}
		if override != nil {
			st.most = *override
		}
		pl.resources = append(pl.resources, name)
		pl.strats = append(pl.strats, st)
	}
	return pl
}

// PrePredicate rejects a task whose annotations do not parse, naming the
// annotation and the reason, rather than scoring it by rules it did not
// ask for.
func (p *Plugin) PrePredicate(t *api.TaskInfo) *framework.Status {
	if pl := p.planOf(t); pl.invalid != "" {
		return &framework.Status{Plugin: Name, Reasons: []string{pl.invalid}, Code: framework.UnschedulableAndUnresolvable}
	}
	return nil
}

// Predicate implements the proportional policy.
func (p *Plugin) Predicate(t *api.TaskInfo, n *api.NodeInfo) *framework.Status {
	return p.status(p.reserve.Check(t, n, nil))
}

// PredicateWithout is Predicate with the victims' requests freed.
func (p *Plugin) PredicateWithout(t *api.TaskInfo, n *api.NodeInfo, victims []*api.TaskInfo) *framework.Status {
	return p.status(p.reserve.Check(t, n, proportional.Freed(victims)))
}

func (p *Plugin) status(reason string) *framework.Status {
	if reason == "" {
		return nil
	}
	return &framework.Status{Plugin: Name, Reasons: []string{reason}}
}

// ScoreNodes adds each node's strategy score and retention score.
func (p *Plugin) ScoreNodes(t *api.TaskInfo, nodes []*api.NodeInfo, scores []float64) {
	pl := p.planOf(t)
	if pl.invalid != "" {
		return
	}
	for i, n := range nodes {
		scores[i] += p.weight*pl.score(t, n) + p.retentionScore(t, n)
	}
}

// score is the weighted mean of the plan's resources' scores on n.
func (pl *plan) score(t *api.TaskInfo, n *api.NodeInfo) float64 {
	var sum, weights float64
	for i, name := range pl.resources {
		capacity := n.Allocatable.Get(name)
		if capacity == 0 {
			continue
		}
		st := pl.strats[i]
		used := min(float64(n.Used.Get(name)+t.Resreq.Get(name))/float64(capacity), 1)
		s := used
		if !st.most {
			s = 1 - used
		}
		sum += st.weight * s * MaxNodeScore
		weights += st.weight
	}
	if weights == 0 {
		return 0
	}
	return sum / weights
}

// retentionScore is MaxNodeScore × the retention weight × the share of
// scarce-resource weight that n lacks and t does not ask for; 0 when n
// lacks a scarce resource t asks for.
func (p *Plugin) retentionScore(t *api.TaskInfo, n *api.NodeInfo) float64 {
	r := p.retention
	if r == nil || r.sum == 0 {
		return 0
	}
	var absent float64
	for _, name := range r.resources {
		has := n.Allocatable.Get(name) > 0
		wants := t.Resreq.Get(name) > 0
		switch {
		case wants && !has:
			return 0
		case !wants && !has:
			absent += r.weights[name]
		}
	}
	return MaxNodeScore * r.weight * absent / r.sum
}

// Signature: results depend on the task's request, which the session's
// signature holds, and its two annotations.
func (p *Plugin) Signature(t *api.TaskInfo) (string, bool) {
	if t.Pod == nil {
		return "", true
	}
	a := t.Pod.Annotations
	st, okT := a[ScoringTypeAnnotation]
	w, okW := a[WeightAnnotation]
	if !okT && !okW {
		return "", true
	}
	return st + "\x00" + w, true
}

// KeepScores keeps the nodes' scores; each depends on its node alone.
func (p *Plugin) KeepScores(t *api.TaskInfo, nodes []*api.NodeInfo) (framework.KeptScores, error) {
	return framework.NodeLocalScores(p, t, nodes), nil
}
