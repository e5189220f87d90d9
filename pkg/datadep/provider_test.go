package datadep

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
)

var events = Query{System: "amoro", Type: "table", Name: "catalog.db.events", Attributes: map[string]string{"partition": "2026-12-01"}}

func TestStatic(t *testing.T) {
	sources := []ddv1alpha1.DataSource{
		{ObjectMeta: metav1.ObjectMeta{Name: "other-partition"}, Spec: ddv1alpha1.DataSourceSpec{System: "amoro", Type: "table", Name: "catalog.db.events",
			Attributes: map[string]string{"partition": "2026-11-30"}, Locality: &ddv1alpha1.DataSourceLocality{ClusterNames: []string{"member-a"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "events"}, Spec: ddv1alpha1.DataSourceSpec{System: "amoro", Type: "table", Name: "catalog.db.events",
			Attributes: map[string]string{"partition": "2026-12-01"}, Locality: &ddv1alpha1.DataSourceLocality{ClusterNames: []string{"member-b"}}}},
	}
	s := &Static{List: func(context.Context) ([]ddv1alpha1.DataSource, error) { return sources, nil }}
	a, err := s.Resolve(t.Context(), events)
	if err != nil || !cmp.Equal(a.ClusterNames, []string{"member-b"}) {
		t.Errorf("Resolve = %v, %v", a, err)
	}
	_, err = s.Resolve(t.Context(), Query{System: "amoro", Type: "table", Name: "catalog.db.events"})
	if !errors.Is(err, ErrUnknown) || err.Error() != `no DataSource declares amoro table "catalog.db.events": the provider does not know this data` {
		t.Errorf("without attributes: %v", err)
	}
}

// catalog serves the HTTP contract from a map, recording the queries.
func catalog(t *testing.T, answers map[string]any) (*httptest.Server, *[]Query) {
	var seen []Query
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want a JSON POST", http.StatusBadRequest)
			return
		}
		var q Query
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		seen = append(seen, q)
		switch a := answers[q.Name].(type) {
		case nil:
			http.NotFound(w, r)
		case int:
			http.Error(w, "catalog backend down", a)
		case string:
			_, _ = w.Write([]byte(a))
		default:
			_ = json.NewEncoder(w).Encode(a)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestHTTP(t *testing.T) {
	srv, seen := catalog(t, map[string]any{
		"catalog.db.events": map[string]any{"clusterNames": []string{"member-b"}, "ttlSeconds": 600},
		"catalog.db.down":   http.StatusServiceUnavailable,
		"catalog.db.broken": `{"clusterNames": "member-b"`,
		"catalog.db.empty":  map[string]any{"clusterNames": []string{}},
	})
	reg := NewRegistry()
	if err := reg.Register("amoro", &HTTP{ProviderName: "amoro-catalog", URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	a, name, err := reg.Resolve(t.Context(), events)
	if err != nil || name != "amoro-catalog" || !cmp.Equal(a, Answer{ClusterNames: []string{"member-b"}, TTL: 10 * time.Minute}) {
		t.Errorf("Resolve = %v, %s, %v", a, name, err)
	}
	if diff := cmp.Diff([]Query{events}, *seen); diff != "" {
		t.Errorf("the catalog was asked (-want,+got):\n%s", diff)
	}
	for q, want := range map[string]string{
		"catalog.db.unknown": `provider amoro-catalog does not know amoro table "catalog.db.unknown": the provider does not know this data`,
		"catalog.db.down":    `provider amoro-catalog answered 503 Service Unavailable about amoro table "catalog.db.down": catalog backend down`,
		"catalog.db.broken":  `provider amoro-catalog answered amoro table "catalog.db.broken" with a body that is not the contract's JSON: unexpected EOF`,
		"catalog.db.empty":   `provider amoro-catalog answered amoro table "catalog.db.empty" with no cluster`,
	} {
		_, _, err := reg.Resolve(t.Context(), Query{System: "amoro", Type: "table", Name: q})
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", q, err, want)
		}
		if unknown := errors.Is(err, ErrUnknown); unknown != (q == "catalog.db.unknown") {
			t.Errorf("%s: unknown %v", q, unknown)
		}
	}
	if _, _, err := reg.Resolve(t.Context(), Query{System: "hive", Type: "table", Name: "t"}); !errors.Is(err, ErrUnknown) {
		t.Errorf("a system without a provider: %v", err)
	}
}

// TestHTTPOutage: a catalog that does not answer in time is a failure,
// not an unknown.
func TestHTTPOutage(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	h := &HTTP{URL: srv.URL, Timeout: 100 * time.Millisecond}
	_, err := h.Resolve(t.Context(), events)
	if err == nil || errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("a catalog that does not answer: %v", err)
	}
	close(release)
	srv.Close()
	if _, err := h.Resolve(t.Context(), events); err == nil || errors.Is(err, ErrUnknown) {
		t.Errorf("a catalog that is gone: %v", err)
	}
}
