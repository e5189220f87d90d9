// Package admit turns the verdicts of Caldera's admission webhooks into the
// errors controller-runtime sends back to the API server: a refusal is an
// Invalid status whose causes name each field and reason, so that kubectl
// prints, for example,
//
//	spec.queue: Invalid value: "nope": queue does not exist; existing queues: default
package admit

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Invalid returns nil when errs is empty, and otherwise an Invalid status
// error for the object kind and name carrying every field error.
func Invalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gk, name, errs)
}

// Internal wraps a failure to reach the information a decision needs (an
// API request that failed) as an internal error: the request is refused, or
// let through under an Ignore failure policy, but not judged invalid.
func Internal(what string, err error) error {
	return apierrors.NewInternalError(fmt.Errorf("%s: %w", what, err))
}
