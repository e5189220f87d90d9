// Package lookup reads the objects that admission decisions depend on. The
// webhook answers from its informer cache, which is fast but a moment behind
// the API server; before it refuses a request it asks the API server itself,
// so that a queue created or opened a moment ago is not refused because the
// cache has not seen it yet.
package lookup

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reader reads from a cache and, to confirm a refusal, from the API server.
type Reader struct {
	// Cached is the informer cache. Required.
	Cached client.Reader
	// Live reads the API server. Nil means Cached is authoritative (tests).
	Live client.Reader
}

// Get reads an object from the cache and, when the cache does not have it,
// from the API server.
func (r Reader) Get(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	err := r.Cached.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) && r.Live != nil {
		return r.Live.Get(ctx, key, obj)
	}
	return err
}

// Check is a decision that reads other objects: it returns the problems it
// finds, or an error when it could not read what it needs.
type Check func(ctx context.Context, c client.Reader) (field.ErrorList, error)

// Confirmed runs check against the cache and, if it finds problems, once more
// against the API server, whose verdict is final. Checks that pass on the
// cache are not repeated, so the common case costs no API request.
func (r Reader) Confirmed(ctx context.Context, check Check) (field.ErrorList, error) {
	errs, err := check(ctx, r.Cached)
	if err == nil && len(errs) == 0 {
		return nil, nil
	}
	if r.Live == nil {
		return errs, err
	}
	return check(ctx, r.Live)
}
