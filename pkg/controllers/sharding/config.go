package sharding

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/caldera-sh/caldera/pkg/controllers/sharding/core"
)

// WarmupLabel marks nodes a shard with prefer-warmup-nodes takes first.
const WarmupLabel = "node.volcano.sh/warmup"

// Config is the sharding controller's configuration, with the field names
// of Volcano's sharding controller (scheduler-configs) and Caldera's
// additions (node-selector, hysteresis, resync-period).
type Config struct {
	// Shards are the NodeShards the controller writes, one per scheduler
	// instance, in the order nodes are offered to them.
	Shards []ShardConfig `json:"scheduler-configs"`
	// Hysteresis widens a shard's CPU utilisation band for the nodes it
	// already has, so that a node near a boundary does not move back and
	// forth. Default 0.05.
	Hysteresis *float64 `json:"hysteresis,omitempty"`
	// ResyncPeriod is how often the assignment is recomputed as pods come
	// and go; node and NodeShard changes recompute it at once. Default 10s.
	ResyncPeriod *metav1.Duration `json:"resync-period,omitempty"`
}

// ShardConfig is one shard's policy.
type ShardConfig struct {
	// Name is the NodeShard's, and the scheduler instance's
	// (--scheduler-sharding-name).
	Name string `json:"name"`
	// Type describes the instance (for example volcano or agent); it is
	// not interpreted.
	Type string `json:"type,omitempty"`
	// NodeSelector, when set, takes the nodes it matches (a label selector
	// as kubectl reads it, for example "pool=batch,!gpu"); the utilisation
	// band is then not read.
	NodeSelector string `json:"node-selector,omitempty"`
	// CPUUtilizationMin and CPUUtilizationMax take the nodes whose CPU
	// requested over allocatable lies between them, 0 to 1.
	CPUUtilizationMin *float64 `json:"cpu-utilization-min,omitempty"`
	CPUUtilizationMax *float64 `json:"cpu-utilization-max,omitempty"`
	// PreferWarmupNodes ranks nodes labelled node.volcano.sh/warmup=true
	// first when the shard picks among nodes.
	PreferWarmupNodes bool `json:"prefer-warmup-nodes,omitempty"`
	// MinNodes and MaxNodes bound the shard (MaxNodes 0: no bound).
	MinNodes int `json:"min-nodes,omitempty"`
	MaxNodes int `json:"max-nodes,omitempty"`
}

// LoadConfig reads and checks a configuration; every problem is reported
// with the field at fault.
func LoadConfig(data []byte) (*Config, error) {
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, err
	}
	if errs := c.validate(); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &c, nil
}

func (c *Config) validate() field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("scheduler-configs")
	if len(c.Shards) == 0 {
		errs = append(errs, field.Required(path, "name at least one shard"))
	}
	seen := map[string]bool{}
	for i, s := range c.Shards {
		p := path.Index(i)
		for _, msg := range validation.IsDNS1123Subdomain(s.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), s.Name, msg))
		}
		if seen[s.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), s.Name))
		}
		seen[s.Name] = true
		if s.NodeSelector != "" {
			if _, err := labels.Parse(s.NodeSelector); err != nil {
				errs = append(errs, field.Invalid(p.Child("node-selector"), s.NodeSelector, err.Error()))
			}
			if s.CPUUtilizationMin != nil || s.CPUUtilizationMax != nil {
				errs = append(errs, field.Forbidden(p.Child("node-selector"), "a shard takes nodes by node-selector or by cpu-utilization-min/max, not both"))
			}
		} else {
			lo, hi := deref(s.CPUUtilizationMin, 0), deref(s.CPUUtilizationMax, 1)
			if lo < 0 || lo > 1 {
				errs = append(errs, field.Invalid(p.Child("cpu-utilization-min"), lo, "must be between 0 and 1"))
			}
			if hi < 0 || hi > 1 {
				errs = append(errs, field.Invalid(p.Child("cpu-utilization-max"), hi, "must be between 0 and 1"))
			}
			if lo > hi {
				errs = append(errs, field.Invalid(p.Child("cpu-utilization-max"), hi, fmt.Sprintf("must not be below cpu-utilization-min (%g)", lo)))
			}
		}
		if s.MinNodes < 0 {
			errs = append(errs, field.Invalid(p.Child("min-nodes"), s.MinNodes, "must not be negative"))
		}
		if s.MaxNodes < 0 {
			errs = append(errs, field.Invalid(p.Child("max-nodes"), s.MaxNodes, "must not be negative (0: no bound)"))
		}
		if s.MaxNodes > 0 && s.MinNodes > s.MaxNodes {
			errs = append(errs, field.Invalid(p.Child("min-nodes"), s.MinNodes, fmt.Sprintf("must not be above max-nodes (%d)", s.MaxNodes)))
		}
	}
	if h := deref(c.Hysteresis, 0); h < 0 || h > 0.5 {
		errs = append(errs, field.Invalid(field.NewPath("hysteresis"), h, "must be between 0 and 0.5"))
	}
	if c.ResyncPeriod != nil && c.ResyncPeriod.Duration <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("resync-period"), c.ResyncPeriod.Duration.String(), "must be positive"))
	}
	return errs
}

// policies turns the configuration into the core's policies.
func (c *Config) policies() []core.Policy {
	warmup := labels.SelectorFromSet(labels.Set{WarmupLabel: "true"})
	out := make([]core.Policy, len(c.Shards))
	for i, s := range c.Shards {
		p := core.Policy{Name: s.Name, MinNodes: s.MinNodes, MaxNodes: s.MaxNodes}
		if s.NodeSelector != "" {
			p.Selector, _ = labels.Parse(s.NodeSelector) // validated
		} else {
			p.Band, p.MinUtilisation, p.MaxUtilisation = true, deref(s.CPUUtilizationMin, 0), deref(s.CPUUtilizationMax, 1)
		}
		if s.PreferWarmupNodes {
			p.Prefer = warmup
		}
		out[i] = p
	}
	return out
}

func (c *Config) hysteresis() float64 { return deref(c.Hysteresis, 0.05) }

func (c *Config) resyncPeriod() time.Duration {
	if c.ResyncPeriod == nil {
		return 10 * time.Second
	}
	return c.ResyncPeriod.Duration
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
