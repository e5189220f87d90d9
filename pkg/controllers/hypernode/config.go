package hypernode

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// Config is the HyperNode controller's configuration: the
// networkTopologyDiscovery section of Volcano's controller configuration
// (volcano-controller.conf), read as Volcano writes it.
type Config struct {
	// Discovery lists the sources HyperNodes are discovered from.
	Discovery []DiscoverySource `json:"networkTopologyDiscovery"`
}

// DiscoverySource is one source of network topology.
type DiscoverySource struct {
	// Source names the source; only "label" is available.
	Source string `json:"source"`
	// Enabled turns the source on. Default false, as in Volcano.
	Enabled bool `json:"enabled,omitempty"`
	// Interval is how often the HyperNodes are rebuilt even without a
	// node change. Default 10m.
	Interval *metav1.Duration `json:"interval,omitempty"`
	// Config is the source's own configuration.
	Config LabelSourceConfig `json:"config,omitempty"`
	// Credentials are for sources that query a fabric manager; the label
	// source has none.
	Credentials map[string]any `json:"credentials,omitempty"`
}

// LabelSourceConfig configures the label source.
type LabelSourceConfig struct {
	// Types are the network topologies to discover, by name (the name
	// prefixes their HyperNodes' names).
	Types map[string]TopologyType `json:"networkTopologyTypes,omitempty"`
}

// TopologyType is one topology: node label keys from the top tier down.
// Volcano accepts two spellings: a list of {nodeLabel}, or an object with
// a nodeSelector and levels; both are read.
type TopologyType struct {
	// NodeSelector selects the nodes of this topology; nil means every
	// node with all the level labels.
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
	// Levels are the label keys, top tier first; a last level of
	// kubernetes.io/hostname stands for the nodes themselves.
	Levels []Level `json:"levels"`
}

// UnmarshalJSON reads either spelling of a topology type.
func (t *TopologyType) UnmarshalJSON(data []byte) error {
	if trimmed := strings.TrimSpace(string(data)); strings.HasPrefix(trimmed, "[") {
		var levels []Level
		if err := yaml.UnmarshalStrict(data, &levels); err != nil {
			return err
		}
		t.Levels = levels
		return nil
	}
	type plain TopologyType
	var p plain
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return err
	}
	*t = TopologyType(p)
	return nil
}

// Level is one tier of a topology.
type Level struct {
	// NodeLabel is the label whose value names a node's HyperNode at this
	// tier.
	NodeLabel string `json:"nodeLabel"`
	// TierName names the tier on its HyperNodes; default the label key.
	TierName string `json:"tierName,omitempty"`
}

// LabelSource is the only discovery source this version has.
const LabelSource = "label"

// HostnameLabel at the bottom of a topology's levels stands for the nodes.
const HostnameLabel = "kubernetes.io/hostname"

// DefaultInterval is how often discovery runs without a node change.
const DefaultInterval = 10 * time.Minute

// LoadConfig reads a configuration file's content: a full Volcano
// controller configuration whose other sections are ignored, or just the
// networkTopologyDiscovery section. The section is read strictly and
// validated.
func LoadConfig(data []byte) (*Config, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("reading the HyperNode discovery configuration: %w", err)
	}
	section, ok := doc["networkTopologyDiscovery"]
	if !ok {
		return &Config{}, nil
	}
	raw, err := yaml.Marshal(map[string]any{"networkTopologyDiscovery": section})
	if err != nil {
		return nil, err
	}
	cfg := &Config{}
	if err := yaml.UnmarshalStrict(raw, cfg); err != nil {
		return nil, fmt.Errorf("reading networkTopologyDiscovery: %w", err)
	}
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid HyperNode discovery configuration: %w", errs.ToAggregate())
	}
	return cfg, nil
}

// Validate checks the configuration.
func (c *Config) Validate() field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("networkTopologyDiscovery")
	seen := map[string]bool{}
	for i, s := range c.Discovery {
		p := path.Index(i)
		if seen[s.Source] {
			errs = append(errs, field.Duplicate(p.Child("source"), s.Source))
		}
		seen[s.Source] = true
		if s.Source != LabelSource {
			if s.Enabled {
				errs = append(errs, field.NotSupported(p.Child("source"), s.Source, []string{LabelSource}))
			}
			continue
		}
		if s.Interval != nil && s.Interval.Duration <= 0 {
			errs = append(errs, field.Invalid(p.Child("interval"), s.Interval.Duration.String(), "must be positive"))
		}
		errs = append(errs, s.Config.validate(p.Child("config"))...)
	}
	return errs
}

func (c *LabelSourceConfig) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	typesPath := path.Child("networkTopologyTypes")
	names := make([]string, 0, len(c.Types))
	for name := range c.Types {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := typesPath.Key(name)
		if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 || len(name) > 20 {
			msg := "must be a DNS label of at most 20 characters: it begins the names of its HyperNodes"
			if len(msgs) > 0 {
				msg = strings.Join(msgs, "; ")
			}
			errs = append(errs, field.Invalid(p, name, msg))
		}
		t := c.Types[name]
		levels := t.tiers()
		if len(levels) == 0 {
			errs = append(errs, field.Required(p.Child("levels"), "at least one node label above "+HostnameLabel))
		}
		keys := map[string]bool{}
		for j, l := range t.Levels {
			lp := p.Child("levels").Index(j).Child("nodeLabel")
			if l.NodeLabel == "" {
				errs = append(errs, field.Required(lp, ""))
				continue
			}
			if msgs := validation.IsQualifiedName(l.NodeLabel); len(msgs) > 0 {
				errs = append(errs, field.Invalid(lp, l.NodeLabel, strings.Join(msgs, "; ")))
			}
			if keys[l.NodeLabel] {
				errs = append(errs, field.Duplicate(lp, l.NodeLabel))
			}
			keys[l.NodeLabel] = true
			if l.NodeLabel == HostnameLabel && j != len(t.Levels)-1 {
				errs = append(errs, field.Invalid(lp, l.NodeLabel, "stands for the nodes themselves and may only be the last level"))
			}
		}
		if t.NodeSelector != nil {
			if _, err := metav1.LabelSelectorAsSelector(t.NodeSelector); err != nil {
				errs = append(errs, field.Invalid(p.Child("nodeSelector"), metav1.FormatLabelSelector(t.NodeSelector), err.Error()))
			}
		}
	}
	return errs
}

// tiers are the levels above the nodes, top first.
func (t TopologyType) tiers() []Level {
	levels := t.Levels
	if n := len(levels); n > 0 && levels[n-1].NodeLabel == HostnameLabel {
		levels = levels[:n-1]
	}
	return levels
}

// labelSource returns the enabled label source, nil when there is none.
func (c *Config) labelSource() *DiscoverySource {
	for i := range c.Discovery {
		if s := &c.Discovery[i]; s.Source == LabelSource && s.Enabled {
			return s
		}
	}
	return nil
}

// Interval is how often discovery runs without a change; 0 when it is off.
func (c *Config) Interval() time.Duration {
	s := c.labelSource()
	switch {
	case s == nil:
		return 0
	case s.Interval != nil:
		return s.Interval.Duration
	}
	return DefaultInterval
}
