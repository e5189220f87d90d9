package metricsserving

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// reviews answers TokenReviews and SubjectAccessReviews from tables and
// counts them. The API server's own answers are checked by the
// integration test (test/integration/metrics); this one checks what the
// reviewer does with them: the status codes and how long it keeps them.
type reviews struct {
	users   map[string]string          // token → user name
	allowed map[string]map[string]bool // user → path → allowed
	fail    bool
	calls   int
}

func (r *reviews) client() *fake.Clientset {
	c := fake.NewClientset()
	c.PrependReactor("create", "tokenreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
		r.calls++
		if r.fail {
			return true, nil, errors.New("connection refused")
		}
		tr := a.(clienttesting.CreateAction).GetObject().(*authenticationv1.TokenReview)
		if u, ok := r.users[tr.Spec.Token]; ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: u, UID: u + "-uid"}}
		}
		return true, tr, nil
	})
	c.PrependReactor("create", "subjectaccessreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
		r.calls++
		sar := a.(clienttesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		if sar.Spec.NonResourceAttributes == nil || sar.Spec.NonResourceAttributes.Verb != "get" || sar.Spec.UID != sar.Spec.User+"-uid" {
			return true, nil, errors.New("not a non-resource get review of the reviewed user")
		}
		sar.Status.Allowed = r.allowed[sar.Spec.User][sar.Spec.NonResourceAttributes.Path]
		return true, sar, nil
	})
	return c
}

func TestReviewer(t *testing.T) {
	r := &reviews{
		users:   map[string]string{"good": "prometheus", "other": "someone"},
		allowed: map[string]map[string]bool{"prometheus": {"/metrics": true}},
	}
	rev := NewReviewer(r.client())
	now := time.Unix(1000, 0)
	rev.now = func() time.Time { return now }
	h := rev.Wrap(logr.Discard(), hello)
	call := func(path, auth string) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	for _, tc := range []struct {
		name, path, auth string
		want, calls      int
	}{
		{"no token", "/metrics", "", 401, 0},
		{"not a bearer token", "/metrics", "Basic Zm9vOmJhcg==", 401, 0},
		{"unknown token", "/metrics", "Bearer nobody", 401, 1},
		{"unknown token again: kept", "/metrics", "Bearer nobody", 401, 0},
		{"allowed", "/metrics", "Bearer good", 200, 2},
		{"allowed again: kept", "/metrics", "bearer good", 200, 0},
		{"another path", "/debug/pprof/", "Bearer good", 403, 1},
		{"a user without the grant", "/metrics", "Bearer other", 403, 2},
	} {
		before := r.calls
		if got := call(tc.path, tc.auth); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
		if got := r.calls - before; got != tc.calls {
			t.Errorf("%s: %d reviews, want %d", tc.name, got, tc.calls)
		}
	}

	// A refusal is kept for less time than a grant.
	now = now.Add(denyTTL + time.Second)
	r.allowed["someone"] = map[string]bool{"/metrics": true}
	before := r.calls
	if got := call("/metrics", "Bearer other"); got != 200 {
		t.Errorf("after the refusal expired and the grant was given: %d", got)
	}
	if got := call("/metrics", "Bearer good"); got != 200 || r.calls-before != 1 {
		t.Errorf("the grant within its time: %d, %d reviews (want one: the other's access, reviewed again)", got, r.calls-before)
	}
	now = now.Add(allowTTL)
	r.fail = true
	if got := call("/metrics", "Bearer good"); got != http.StatusInternalServerError {
		t.Errorf("API server unreachable once the grant expired: %d, want 500", got)
	}
}
