package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/caldera-sh/caldera/pkg/agent/qos"
)

// Node labels that switch colocation on, Volcano's.
const (
	// ColocationLabel "true" puts the node under the agent's control.
	ColocationLabel = "volcano.sh/colocation"
	// OverSubscriptionLabel "true" or "false" turns publishing batch
	// resources on or off on the node, whatever the configuration says;
	// "true" also puts the node under the agent's control.
	OverSubscriptionLabel = "volcano.sh/oversubscription"
)

// Colocated reports whether a node's labels put it under the agent.
func Colocated(nodeLabels map[string]string) bool {
	return nodeLabels[ColocationLabel] == "true" || nodeLabels[OverSubscriptionLabel] == "true"
}

// Node is the configuration in force on one node, every field set.
type Node struct {
	CPUQoS bool
	// Weights is the cpu.weight of each class's pods.
	Weights   map[qos.Class]int64
	CPUBurst  bool
	MemoryQoS bool
	// HighRatio is memory.high over memory.max for offline pods.
	HighRatio float64

	OverSubscription bool
	OverCPU          bool
	OverMemory       bool
	Ratio            float64
	SafetyMargin     float64

	Evicting            bool
	CPUHighWatermark    int
	MemoryHighWatermark int
	CPULowWatermark     int
	MemoryLowWatermark  int
	MinEvictionInterval time.Duration
}

// Defaults returns the configuration of a node that nothing configures:
// Volcano's agent defaults (CPU, burst and memory QoS off,
// oversubscription of cpu and memory on, eviction at 80% CPU or 60%
// memory until both are under 30%), with this agent's own fields.
func Defaults() Colocation {
	return Colocation{
		CPUQoS: &CPUQoS{Enable: new(false), Weights: map[string]int64{
			string(qos.LatencyCritical): 1000, string(qos.HighlyLatencySensitive): 1000,
			string(qos.LatencySensitive): 500, string(qos.BestEffort): 1,
		}},
		CPUBurst:         &CPUBurst{Enable: new(false)},
		MemoryQoS:        &MemoryQoS{Enable: new(false), HighRatio: new(0.9)},
		NetworkQoS:       &NetworkQoS{Enable: new(false)},
		OverSubscription: &OverSubscription{Enable: new(true), Types: new("cpu,memory"), Ratio: new(0.6), SafetyMargin: new(0.05)},
		Evicting: &Evicting{
			Enable: new(true), CPUHighWatermark: new(80), MemoryHighWatermark: new(60),
			CPULowWatermark: new(30), MemoryLowWatermark: new(30),
			MinInterval: &metav1.Duration{Duration: 10 * time.Second},
		},
	}
}

// Parse decodes the ConfigMap entry strictly (an unknown or misspelled
// field is an error) and validates it.
func Parse(data []byte) (*Configuration, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	c := &Configuration{}
	if err := dec.Decode(c); err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigMapKey, err)
	}
	if errs := c.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", ConfigMapKey, errs.ToAggregate())
	}
	return c, nil
}

// Validate checks every field that is set.
func (c *Configuration) Validate() field.ErrorList {
	var errs field.ErrorList
	if c.GlobalConfig != nil {
		errs = append(errs, c.GlobalConfig.validate(field.NewPath("globalConfig"))...)
	}
	for i, n := range c.NodesConfig {
		p := field.NewPath("nodesConfig").Index(i)
		if n.Selector != nil {
			if _, err := metav1.LabelSelectorAsSelector(n.Selector); err != nil {
				errs = append(errs, field.Invalid(p.Child("selector"), n.Selector, err.Error()))
			}
		}
		errs = append(errs, n.Colocation.validate(p)...)
	}
	return errs
}

func (c *Colocation) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q := c.CPUQoS; q != nil {
		wp := p.Child("cpuQosConfig", "weights")
		for _, k := range slices.Sorted(maps.Keys(q.Weights)) {
			if _, err := qos.Parse(k); err != nil {
				errs = append(errs, field.NotSupported(wp.Key(k), k, qos.Names()))
				continue
			}
			if w := q.Weights[k]; w < 1 || w > 10000 {
				errs = append(errs, field.Invalid(wp.Key(k), w, "must be from 1 to 10000 (cgroup v2 cpu.weight)"))
			}
		}
	}
	if m := c.MemoryQoS; m != nil && m.HighRatio != nil && !(*m.HighRatio > 0 && *m.HighRatio <= 1) {
		errs = append(errs, field.Invalid(p.Child("memoryQosConfig", "highRatio"), *m.HighRatio, "must be greater than 0 and at most 1"))
	}
	if n := c.NetworkQoS; n != nil && n.Enable != nil && *n.Enable {
		errs = append(errs, field.Forbidden(p.Child("networkQosConfig", "enable"), "network QoS is not available in this version"))
	}
	if o := c.OverSubscription; o != nil {
		op := p.Child("overSubscriptionConfig")
		if o.Types != nil {
			if _, _, err := parseTypes(*o.Types); err != nil {
				errs = append(errs, field.Invalid(op.Child("overSubscriptionTypes"), *o.Types, err.Error()))
			}
		}
		if o.Ratio != nil && !(*o.Ratio > 0 && *o.Ratio <= 1) {
			errs = append(errs, field.Invalid(op.Child("ratio"), *o.Ratio, "must be greater than 0 and at most 1"))
		}
		if o.SafetyMargin != nil && !(*o.SafetyMargin >= 0 && *o.SafetyMargin < 1) {
			errs = append(errs, field.Invalid(op.Child("safetyMargin"), *o.SafetyMargin, "must be at least 0 and less than 1"))
		}
	}
	if e := c.Evicting; e != nil {
		ep := p.Child("evictingConfig")
		for _, w := range []struct {
			name string
			v    *int
		}{
			{"evictingCPUHighWatermark", e.CPUHighWatermark}, {"evictingMemoryHighWatermark", e.MemoryHighWatermark},
			{"evictingCPULowWatermark", e.CPULowWatermark}, {"evictingMemoryLowWatermark", e.MemoryLowWatermark},
		} {
			if w.v != nil && (*w.v <= 0 || *w.v > 100) {
				errs = append(errs, field.Invalid(ep.Child(w.name), *w.v, "must be a percentage greater than 0 and at most 100"))
			}
		}
		if e.MinInterval != nil && e.MinInterval.Duration < 0 {
			errs = append(errs, field.Invalid(ep.Child("minInterval"), e.MinInterval.Duration.String(), "must not be negative"))
		}
	}
	return errs
}

// ForNode is the configuration in force on a node with these labels: the
// layers whose selectors match, and the node's OverSubscriptionLabel over
// them. The error names the entries that leave a low watermark above its
// high one.
func (c *Configuration) ForNode(nodeLabels map[string]string) (Node, error) {
	eff := Defaults()
	layers := []string{"defaults"}
	if c != nil && c.GlobalConfig != nil {
		eff.overlay(c.GlobalConfig)
		layers = append(layers, "globalConfig")
	}
	if c != nil {
		for i, n := range c.NodesConfig {
			if n.Selector == nil {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(n.Selector)
			if err != nil || !sel.Matches(labels.Set(nodeLabels)) {
				continue
			}
			eff.overlay(&n.Colocation)
			layers = append(layers, fmt.Sprintf("nodesConfig[%d]", i))
		}
	}
	cpu, mem, _ := parseTypes(*eff.OverSubscription.Types)
	n := Node{
		CPUQoS:    *eff.CPUQoS.Enable,
		Weights:   map[qos.Class]int64{},
		CPUBurst:  *eff.CPUBurst.Enable,
		MemoryQoS: *eff.MemoryQoS.Enable,
		HighRatio: *eff.MemoryQoS.HighRatio,

		OverSubscription: *eff.OverSubscription.Enable,
		OverCPU:          cpu,
		OverMemory:       mem,
		Ratio:            *eff.OverSubscription.Ratio,
		SafetyMargin:     *eff.OverSubscription.SafetyMargin,

		Evicting:            *eff.Evicting.Enable,
		CPUHighWatermark:    *eff.Evicting.CPUHighWatermark,
		MemoryHighWatermark: *eff.Evicting.MemoryHighWatermark,
		CPULowWatermark:     *eff.Evicting.CPULowWatermark,
		MemoryLowWatermark:  *eff.Evicting.MemoryLowWatermark,
		MinEvictionInterval: eff.Evicting.MinInterval.Duration,
	}
	for k, w := range eff.CPUQoS.Weights {
		n.Weights[qos.Class(k)] = w
	}
	switch nodeLabels[OverSubscriptionLabel] {
	case "true":
		n.OverSubscription = true
	case "false":
		n.OverSubscription = false
	}
	from := strings.Join(layers, " < ")
	if n.CPULowWatermark > n.CPUHighWatermark {
		return n, fmt.Errorf("evictingCPULowWatermark %d is above evictingCPUHighWatermark %d (from %s)", n.CPULowWatermark, n.CPUHighWatermark, from)
	}
	if n.MemoryLowWatermark > n.MemoryHighWatermark {
		return n, fmt.Errorf("evictingMemoryLowWatermark %d is above evictingMemoryHighWatermark %d (from %s)", n.MemoryLowWatermark, n.MemoryHighWatermark, from)
	}
	return n, nil
}

// overlay sets every field that o sets.
func (c *Colocation) overlay(o *Colocation) {
	if q := o.CPUQoS; q != nil {
		set(&c.CPUQoS.Enable, q.Enable)
		for k, w := range q.Weights {
			c.CPUQoS.Weights[k] = w
		}
	}
	if b := o.CPUBurst; b != nil {
		set(&c.CPUBurst.Enable, b.Enable)
	}
	if m := o.MemoryQoS; m != nil {
		set(&c.MemoryQoS.Enable, m.Enable)
		set(&c.MemoryQoS.HighRatio, m.HighRatio)
	}
	if s := o.OverSubscription; s != nil {
		set(&c.OverSubscription.Enable, s.Enable)
		set(&c.OverSubscription.Types, s.Types)
		set(&c.OverSubscription.Ratio, s.Ratio)
		set(&c.OverSubscription.SafetyMargin, s.SafetyMargin)
	}
	if e := o.Evicting; e != nil {
		set(&c.Evicting.Enable, e.Enable)
		set(&c.Evicting.CPUHighWatermark, e.CPUHighWatermark)
		set(&c.Evicting.MemoryHighWatermark, e.MemoryHighWatermark)
		set(&c.Evicting.CPULowWatermark, e.CPULowWatermark)
		set(&c.Evicting.MemoryLowWatermark, e.MemoryLowWatermark)
		set(&c.Evicting.MinInterval, e.MinInterval)
	}
}

func set[T any](dst **T, src *T) {
	if src != nil {
		v := *src
		*dst = &v
	}
}

// parseTypes reads overSubscriptionTypes.
func parseTypes(s string) (cpu, memory bool, err error) {
	for t := range strings.SplitSeq(s, ",") {
		switch strings.TrimSpace(t) {
		case "cpu":
			cpu = true
		case "memory":
			memory = true
		case "":
		default:
			return false, false, fmt.Errorf("unknown resource %q: list cpu, memory or both, separated by commas", strings.TrimSpace(t))
		}
	}
	return cpu, memory, nil
}
