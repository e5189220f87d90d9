// Package priorityclass checks the PriorityClass a Job or PodGroup names.
package priorityclass

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Builtin PriorityClasses exist in every cluster: the API server creates
// them.
const (
	SystemClusterCritical = "system-cluster-critical"
	SystemNodeCritical    = "system-node-critical"
)

// Validate refuses a name that names no PriorityClass. An empty name means
// the default class (or priority zero) and is always valid.
func Validate(ctx context.Context, c client.Reader, name string, fldPath *field.Path) (field.ErrorList, error) {
	if name == "" || name == SystemClusterCritical || name == SystemNodeCritical {
		return nil, nil
	}
	err := c.Get(ctx, client.ObjectKey{Name: name}, &schedulingv1.PriorityClass{})
	switch {
	case apierrors.IsNotFound(err):
		return field.ErrorList{field.Invalid(fldPath, name, "PriorityClass does not exist")}, nil
	case err != nil:
		return nil, fmt.Errorf("reading PriorityClass %s: %w", name, err)
	}
	return nil, nil
}
