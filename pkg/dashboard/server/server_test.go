package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/dashboard/model"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	"github.com/caldera-sh/caldera/test/poll"
)

// memory is a source whose objects the test sets.
type memory struct {
	mu      sync.Mutex
	in      model.Input
	changed chan struct{}
	events  error
}

func (s *memory) Snapshot() model.Input {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.in
}
func (s *memory) Changed() <-chan struct{} { return s.changed }
func (s *memory) Scope() string            { return "all namespaces" }
func (s *memory) Events(context.Context, string, []types.UID) ([]corev1.Event, error) {
	return nil, s.events
}

func (s *memory) set(queues ...*schedulingv1beta1.Queue) {
	s.mu.Lock()
	s.in.Queues = queues
	s.mu.Unlock()
	s.changed <- struct{}{}
}

func queue(name, allocated string) *schedulingv1beta1.Queue {
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}
	q.Spec.Deserved = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	q.Status.Allocated = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(allocated)}
	return q
}

func start(t *testing.T, src *memory) (*Server, *httptest.Server) {
	t.Helper()
	s := New(src, Options{Coalesce: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); cancel(); <-done })
	return s, hs
}

func getJSON(t *testing.T, url string, into any) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, r.Status)
	}
	if err := json.NewDecoder(r.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func TestAnswersFollowTheSource(t *testing.T) {
	src := &memory{changed: make(chan struct{}, 1)}
	src.in.Queues = []*schedulingv1beta1.Queue{queue("a", "1")}
	_, hs := start(t, src)

	stream, err := http.Get(hs.URL + "/api/watch")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	versions := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				versions <- v
			}
		}
	}()
	first := <-versions

	var qs Versioned[[]model.Queue]
	getJSON(t, hs.URL+"/api/queues", &qs)
	if got := qs.Items[0].Resources[0].Allocated; got != "1" {
		t.Fatalf("allocated %s, want 1", got)
	}
	src.set(queue("a", "3"))
	// The stream announces the rebuild; what is read after it is new.
	next := <-versions
	if next == first {
		t.Fatalf("the stream sent version %s twice", next)
	}
	getJSON(t, hs.URL+"/api/queues", &qs)
	if got := qs.Items[0].Resources[0].Allocated; got != "3" {
		t.Errorf("after the change: allocated %s, want 3", got)
	}
	if want := next; want != jsonNumber(qs.Version) {
		t.Errorf("answer of version %d after the stream said %s", qs.Version, want)
	}
}

func jsonNumber(v uint64) string { b, _ := json.Marshal(v); return string(b) }

func TestRequestsRefused(t *testing.T) {
	src := &memory{changed: make(chan struct{}, 1), events: errors.New("events: forbidden")}
	_, hs := start(t, src)
	for _, tc := range []struct {
		method, path, host string
		status             int
		body               string
	}{
		{"GET", "/api/jobs?page=0", "", http.StatusBadRequest, `page "0": give a whole number from 1`},
		{"GET", "/api/jobs?pageSize=501", "", http.StatusBadRequest, `pageSize "501": give a whole number from 1 to 500`},
		{"GET", "/api/jobs?sort=age", "", http.StatusBadRequest, `sort "age": give name or newest`},
		{"GET", "/api/jobs?kind=Pod", "", http.StatusBadRequest, `kind "Pod": give Job or PodGroup`},
		{"GET", "/api/nodes?page=x", "", http.StatusBadRequest, `page "x"`},
		{"GET", "/api/jobs/Job/ns/none", "", http.StatusNotFound, "Job ns/none: not found"},
		{"POST", "/api/queues", "", http.StatusMethodNotAllowed, ""},
		{"GET", "/api/queues", "evil.example:8095", http.StatusForbidden, `host "evil.example:8095" is not accepted`},
	} {
		req, _ := http.NewRequest(tc.method, hs.URL+tc.path, nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = bufio.NewReader(r.Body).WriteTo(&b)
		r.Body.Close()
		if r.StatusCode != tc.status || !strings.Contains(b.String(), tc.body) {
			t.Errorf("%s %s (host %q): %d %q, want %d with %q", tc.method, tc.path, tc.host, r.StatusCode, b.String(), tc.status, tc.body)
		}
	}
}

func TestPageServed(t *testing.T) {
	_, hs := start(t, &memory{changed: make(chan struct{}, 1)})
	for path, want := range map[string]string{"/": "<title>Caldera</title>", "/app.js": "EventSource", "/app.css": ".bar"} {
		r, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = bufio.NewReader(r.Body).WriteTo(&b)
		r.Body.Close()
		if r.StatusCode != http.StatusOK || !strings.Contains(b.String(), want) {
			t.Errorf("GET %s: %s, body lacks %q", path, r.Status, want)
		}
		if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
	}
}

func TestRebuildsCoalesce(t *testing.T) {
	src := &memory{changed: make(chan struct{}, 1)}
	s := New(src, Options{Coalesce: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go s.Run(ctx)
	v0 := s.Version()
	src.set(queue("a", "1"))
	// The first change after a quiet spell is built at once...
	poll.Eventually(t, t.Context(), time.Minute, "the first change built", func() (bool, string) {
		return s.Version() != v0, fmt.Sprintf("version %d", s.Version())
	})
	v1 := s.Version()
	// ...the next ones wait out the hour. The channel holds one change: the
	// fourth send returns only once Run has taken the third, so it has
	// handled the second by then.
	src.set(queue("a", "2"))
	src.set(queue("a", "3"))
	src.set(queue("a", "4"))
	if v := s.Version(); v != v1 {
		t.Errorf("rebuilt within the coalescing window: version %d, want %d", v, v1)
	}
}

// Lists are [] when empty, never null: the page and scripts iterate them.
func TestEmptyListsAreLists(t *testing.T) {
	src := &memory{changed: make(chan struct{}, 1)}
	src.in.Queues = []*schedulingv1beta1.Queue{{ObjectMeta: metav1.ObjectMeta{Name: "root"}}}
	_, hs := start(t, src)
	for _, path := range []string{"/api/queues", "/api/jobs", "/api/nodes", "/api/hypernodes"} {
		r, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = bufio.NewReader(r.Body).WriteTo(&b)
		r.Body.Close()
		if strings.Contains(b.String(), "null") {
			t.Errorf("GET %s: %s", path, b.String())
		}
	}
}

func TestFederationAnswer(t *testing.T) {
	src := &memory{changed: make(chan struct{}, 1)}
	_, hs := start(t, src)
	var off FederationAnswer
	getJSON(t, hs.URL+"/api/federation", &off)
	if off.Enabled || off.Members == nil || off.Held == nil {
		t.Errorf("without Karmada: %+v, want disabled, with empty lists", off)
	}

	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member-1"}}
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady"}}
	src.mu.Lock()
	src.in.Federation = &model.FederationInput{Host: "https://127.0.0.1:5443", Clusters: []*clusterv1alpha1.Cluster{c}}
	src.mu.Unlock()
	src.changed <- struct{}{}
	var on FederationAnswer
	if err := poll.Until(t.Context(), 5*time.Second, "the federation shown", func() (bool, string) {
		getJSON(t, hs.URL+"/api/federation", &on)
		return on.Enabled && len(on.Members) == 1 && on.Members[0].Ready, fmt.Sprintf("%+v", on)
	}); err != nil {
		t.Fatal(err)
	}
}
