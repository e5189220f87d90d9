// Package datadep resolves where the data a workload reads lives, for
// data-dependency-aware placement (datadependency.volcano.sh). A claim
// names its data by system, type, name and attributes; a Provider answers
// with the member clusters next to the data, and for how long the answer
// holds.
//
// Providers are plugins behind one interface. Two ship: Static, which
// answers from DataSource objects an administrator declared with their
// locality, and HTTP, which asks a catalog service over a small JSON
// contract (see HTTP), so that any catalog can answer. A catalog with its
// own protocol (an Iceberg REST catalog, Amoro) is one more Provider.
package datadep

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Query names the data.
type Query struct {
	System     string            `json:"system"`
	Type       string            `json:"type"`
	Name       string            `json:"name"`
	Attributes map[string]string `json:"attributes,omitempty"`
}

func (q Query) String() string {
	s := fmt.Sprintf("%s %s %q", q.System, q.Type, q.Name)
	if len(q.Attributes) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(q.Attributes)) {
			kv = append(kv, k+"="+q.Attributes[k])
		}
		s += " (" + strings.Join(kv, ", ") + ")"
	}
	return s
}

// Answer is where the data lives.
type Answer struct {
	// ClusterNames are the member clusters next to the data.
	ClusterNames []string
	// TTL is how long the answer holds; 0 means until the DataSource is
	// changed or deleted.
	TTL time.Duration
}

// ErrUnknown is returned, wrapped, by a provider that does not know the
// data: the claim cannot be resolved by it (as opposed to the provider
// failing, which is worth trying again).
var ErrUnknown = errors.New("the provider does not know this data")

// Provider resolves queries.
type Provider interface {
	// Name is the provider's name, for messages.
	Name() string
	// Resolve answers where the data lives, or returns an error wrapping
	// ErrUnknown when it does not know the data.
	Resolve(ctx context.Context, q Query) (Answer, error)
}

// Registry picks the provider of a query by its system.
type Registry struct {
	bySystem map[string]Provider
	// Default answers systems no provider is registered for; nil means
	// those are unknown.
	Default Provider
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{bySystem: map[string]Provider{}} }

// Register makes p the provider of system.
func (r *Registry) Register(system string, p Provider) error {
	if _, dup := r.bySystem[system]; dup {
		return fmt.Errorf("system %q has a provider already", system)
	}
	r.bySystem[system] = p
	return nil
}

// Resolve asks the provider of the query's system.
func (r *Registry) Resolve(ctx context.Context, q Query) (Answer, string, error) {
	p := r.bySystem[q.System]
	if p == nil {
		p = r.Default
	}
	if p == nil {
		return Answer{}, "", fmt.Errorf("no provider for system %q: %w", q.System, ErrUnknown)
	}
	a, err := p.Resolve(ctx, q)
	if err != nil {
		return Answer{}, p.Name(), err
	}
	if err := checkAnswer(a); err != nil {
		return Answer{}, p.Name(), fmt.Errorf("provider %s answered %s with %w", p.Name(), q, err)
	}
	return a, p.Name(), nil
}

// checkAnswer refuses answers no placement can use.
func checkAnswer(a Answer) error {
	if len(a.ClusterNames) == 0 {
		return errors.New("no cluster")
	}
	for _, c := range a.ClusterNames {
		if msgs := validation.IsDNS1123Subdomain(c); len(msgs) > 0 {
			return fmt.Errorf("cluster name %q: %s", c, strings.Join(msgs, "; "))
		}
	}
	if a.TTL < 0 {
		return fmt.Errorf("a negative TTL %s", a.TTL)
	}
	return nil
}
