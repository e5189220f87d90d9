package descheduler

import (
	"fmt"
	"math"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/caldera-sh/caldera/pkg/controllers/descheduler/core"
)

// Config is the load-aware descheduler's configuration file
// (--descheduler-config).
type Config struct {
	// Interval is the time between two runs. Default 2m.
	Interval *metav1.Duration `json:"interval,omitempty"`
	// HighWatermark is the usage, in percent of a node's allocatable,
	// above which the node is hot. Default cpu 80, memory 80.
	HighWatermark Watermark `json:"highWatermark,omitzero"`
	// LowWatermark is the usage a hot node's hot resources are brought
	// down to. Default cpu 60, memory 60; at most HighWatermark.
	LowWatermark Watermark `json:"lowWatermark,omitzero"`
	// MaxEvictionsPerRun caps the evictions of one run. Default 10.
	MaxEvictionsPerRun *int32 `json:"maxEvictionsPerRun,omitempty"`
	// MaxEvictionsPerNode caps the evictions from one node in one run.
	// Default 2.
	MaxEvictionsPerNode *int32 `json:"maxEvictionsPerNode,omitempty"`
	// StaleAfter is the age past which a node's usage is not acted on.
	// Default 5m.
	StaleAfter *metav1.Duration `json:"staleAfter,omitempty"`
	// Namespaces limit the pods that may be moved.
	Namespaces Namespaces `json:"namespaces,omitzero"`
	// DryRun decides and reports without evicting.
	DryRun bool `json:"dryRun,omitempty"`
}

// Watermark is a usage percentage per resource.
type Watermark struct {
	CPU    *float64 `json:"cpu,omitempty"`
	Memory *float64 `json:"memory,omitempty"`
}

// Namespaces say whose pods may be moved: those of Include (every
// namespace when empty) not in Exclude. Default exclude: kube-system.
type Namespaces struct {
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// LoadConfig reads, defaults and validates a configuration file.
func LoadConfig(data []byte) (*Config, error) {
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, err
	}
	c.Default()
	if errs := c.Validate(); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &c, nil
}

// Default fills in unset fields.
func (c *Config) Default() {
	setDefault(&c.Interval, metav1.Duration{Duration: 2 * time.Minute})
	setDefault(&c.HighWatermark.CPU, 80)
	setDefault(&c.HighWatermark.Memory, 80)
	setDefault(&c.LowWatermark.CPU, 60)
	setDefault(&c.LowWatermark.Memory, 60)
	setDefault(&c.MaxEvictionsPerRun, 10)
	setDefault(&c.MaxEvictionsPerNode, 2)
	setDefault(&c.StaleAfter, metav1.Duration{Duration: 5 * time.Minute})
	if c.Namespaces.Exclude == nil {
		c.Namespaces.Exclude = []string{metav1.NamespaceSystem}
	}
}

func setDefault[T any](p **T, v T) {
	if *p == nil {
		*p = &v
	}
}

// Validate checks a defaulted configuration.
func (c *Config) Validate() field.ErrorList {
	var errs field.ErrorList
	if c.Interval.Duration <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("interval"), c.Interval.Duration.String(), "must be positive"))
	}
	if c.StaleAfter.Duration <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("staleAfter"), c.StaleAfter.Duration.String(), "must be positive"))
	}
	for _, r := range []struct {
		name      string
		high, low float64
	}{{"cpu", *c.HighWatermark.CPU, *c.LowWatermark.CPU}, {"memory", *c.HighWatermark.Memory, *c.LowWatermark.Memory}} {
		for _, w := range []struct {
			path string
			v    float64
		}{{"highWatermark", r.high}, {"lowWatermark", r.low}} {
			if w.v < 0 || w.v > 100 || math.IsNaN(w.v) {
				errs = append(errs, field.Invalid(field.NewPath(w.path, r.name), w.v, "must be a percentage between 0 and 100"))
			}
		}
		if r.low > r.high {
			errs = append(errs, field.Invalid(field.NewPath("lowWatermark", r.name), r.low,
				fmt.Sprintf("must not be above highWatermark.%s (%g)", r.name, r.high)))
		}
	}
	if *c.MaxEvictionsPerRun < 1 {
		errs = append(errs, field.Invalid(field.NewPath("maxEvictionsPerRun"), *c.MaxEvictionsPerRun, "must be at least 1"))
	}
	if *c.MaxEvictionsPerNode < 1 {
		errs = append(errs, field.Invalid(field.NewPath("maxEvictionsPerNode"), *c.MaxEvictionsPerNode, "must be at least 1"))
	}
	return errs
}

// Policy is the core's view of the configuration.
func (c *Config) Policy() core.Config {
	return core.Config{
		High:       core.Percentages{CPU: *c.HighWatermark.CPU, Memory: *c.HighWatermark.Memory},
		Low:        core.Percentages{CPU: *c.LowWatermark.CPU, Memory: *c.LowWatermark.Memory},
		MaxPerRun:  int(*c.MaxEvictionsPerRun),
		MaxPerNode: int(*c.MaxEvictionsPerNode),
		StaleAfter: c.StaleAfter.Duration,
	}
}

// movesFrom reports whether pods of the namespace may be moved.
func (c *Config) movesFrom(ns string) bool {
	return !slices.Contains(c.Namespaces.Exclude, ns) && (len(c.Namespaces.Include) == 0 || slices.Contains(c.Namespaces.Include, ns))
}
