package testing

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
)

// Causes returns what a handler's refusal tells the user, one cause per
// field error; nil for nil. It fails the test for an error that is not an
// Invalid status.
func Causes(t testing.TB, err error) []metav1.StatusCause {
	t.Helper()
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid status error, got %T: %v", err, err)
	}
	return status.Status().Details.Causes
}

// Cause is the cause of a field error of type errType at path, as the API
// server reports it: message is "<type>: <value>: <detail>".
func Cause(errType metav1.CauseType, path, message string) metav1.StatusCause {
	return metav1.StatusCause{Type: errType, Field: path, Message: message}
}

// Scheme returns the scheme of every API Caldera serves.
func Scheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Reader returns a reader that holds objs, in its cache and in the API
// server alike.
func Reader(t testing.TB, objs ...client.Object) lookup.Reader {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(Scheme(t)).WithObjects(objs...).Build()
	return lookup.Reader{Cached: c}
}

// StaleReader returns a reader whose cache holds cached and whose API server
// holds live, for decisions that must not trust a stale cache.
func StaleReader(t testing.TB, cached, live []client.Object) lookup.Reader {
	t.Helper()
	return lookup.Reader{
		Cached: fake.NewClientBuilder().WithScheme(Scheme(t)).WithObjects(cached...).Build(),
		Live:   fake.NewClientBuilder().WithScheme(Scheme(t)).WithObjects(live...).Build(),
	}
}

// Cause types, for brevity in tables.
const (
	Invalid      = metav1.CauseTypeFieldValueInvalid
	Required     = metav1.CauseTypeFieldValueRequired
	NotSupported = metav1.CauseTypeFieldValueNotSupported
	Forbidden    = metav1.CauseTypeForbidden
	NotFound     = metav1.CauseTypeFieldValueNotFound
	Duplicate    = metav1.CauseTypeFieldValueDuplicate
)

// IgnoreMessage compares causes by type and field only, for causes whose
// wording is Kubernetes' (pod validation) rather than Caldera's.
var IgnoreMessage = cmpopts.IgnoreFields(metav1.StatusCause{}, "Message")
