package admit

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Stateless admits objects of one kind whose defaults and validity depend
// on the object alone: SetDefaults on create and update (it must be
// idempotent), Check on create and update alike (every field may change),
// and every deletion allowed.
type Stateless[T client.Object] struct {
	Kind schema.GroupKind
	// SetDefaults fills in defaults; nil when the kind has none.
	SetDefaults func(T)
	// Check returns what is wrong with the object, each error naming its
	// field.
	Check func(T) field.ErrorList
}

// Default applies SetDefaults.
func (s Stateless[T]) Default(_ context.Context, obj T) error {
	if s.SetDefaults != nil {
		s.SetDefaults(obj)
	}
	return nil
}

// ValidateCreate checks a new object.
func (s Stateless[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	return nil, Invalid(s.Kind, obj.GetName(), s.Check(obj))
}

// ValidateUpdate checks a changed object as a new one.
func (s Stateless[T]) ValidateUpdate(_ context.Context, _, obj T) (admission.Warnings, error) {
	return nil, Invalid(s.Kind, obj.GetName(), s.Check(obj))
}

// ValidateDelete allows every deletion.
func (s Stateless[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}
