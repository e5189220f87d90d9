package datadep

import (
	"context"
	"fmt"
	"maps"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
)

// Static answers from DataSource objects that carry their locality: those
// an administrator declared (and those the controller cached, which carry
// it too). A DataSource matches a query with the same system, type, name
// and exactly the same attributes.
type Static struct {
	// List returns the DataSources.
	List func(ctx context.Context) ([]ddv1alpha1.DataSource, error)
}

// Name implements Provider.
func (s *Static) Name() string { return "static" }

// Resolve implements Provider.
func (s *Static) Resolve(ctx context.Context, q Query) (Answer, error) {
	sources, err := s.List(ctx)
	if err != nil {
		return Answer{}, fmt.Errorf("listing DataSources: %w", err)
	}
	for i := range sources {
		ds := &sources[i]
		if Matches(ds, q) && ds.Spec.Locality != nil && len(ds.Spec.Locality.ClusterNames) > 0 {
			return Answer{ClusterNames: append([]string(nil), ds.Spec.Locality.ClusterNames...)}, nil
		}
	}
	return Answer{}, fmt.Errorf("no DataSource declares %s: %w", q, ErrUnknown)
}

// Matches reports whether a DataSource is the query's data.
func Matches(ds *ddv1alpha1.DataSource, q Query) bool {
	// maps.Equal holds for a nil and an empty map alike.
	return ds.Spec.System == q.System && ds.Spec.Type == q.Type && ds.Spec.Name == q.Name && maps.Equal(ds.Spec.Attributes, q.Attributes)
}
