// Package server serves the dashboard: a JSON API over the views of package
// model, a stream of server-sent events that says when they changed, and
// the page itself. The objects come from a Source (package server's
// Watcher reads them through informers with the user's credentials); the
// server rebuilds the model when they change, at most once per Coalesce,
// and answers every request from the last model, so a page of jobs costs
// the same whatever the number of readers.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/caldera-sh/caldera/pkg/dashboard/model"
	"github.com/caldera-sh/caldera/pkg/dashboard/web"
	"github.com/caldera-sh/caldera/pkg/version"
)

// Source is what the dashboard shows.
type Source interface {
	// Snapshot returns the objects as they are now.
	Snapshot() model.Input
	// Changed receives (without blocking the source) whenever the objects
	// change.
	Changed() <-chan struct{}
	// Events returns the namespace's events about the objects of the UIDs.
	Events(ctx context.Context, namespace string, uids []types.UID) ([]corev1.Event, error)
	// Scope says what the user sees: "all namespaces" or one namespace.
	Scope() string
}

// Options tune the server.
type Options struct {
	// Coalesce is the least time between two rebuilds (500 ms when 0).
	Coalesce time.Duration
	// SampleEvery is how often the queues' shares are sampled for their
	// history (10 s when 0); History is how many samples are kept (360, an
	// hour, when 0).
	SampleEvery time.Duration
	History     int
	// AcceptHosts are the Host headers served, as regular expressions; a
	// request naming another host is refused, so that a web page elsewhere
	// cannot reach the dashboard through a name it resolves to loopback.
	// DefaultAcceptHosts when nil.
	AcceptHosts []*regexp.Regexp
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// DefaultAcceptHosts are the loopback names, with any port.
var DefaultAcceptHosts = []string{`^localhost(:\d+)?$`, `^127\.0\.0\.1(:\d+)?$`, `^\[::1\](:\d+)?$`}

// Server is the dashboard's HTTP server.
type Server struct {
	src  Source
	opts Options
	mux  *http.ServeMux

	mu      sync.Mutex
	model   *model.Model
	version uint64
	history *model.History
	// changed is closed and replaced on each rebuild: the event streams
	// wait on it.
	changed chan struct{}
}

// New returns a server of the source's objects. Run keeps it current.
func New(src Source, opts Options) *Server {
	if opts.Coalesce == 0 {
		opts.Coalesce = 500 * time.Millisecond
	}
	if opts.SampleEvery == 0 {
		opts.SampleEvery = 10 * time.Second
	}
	if opts.History == 0 {
		opts.History = 360
	}
	if opts.AcceptHosts == nil {
		for _, h := range DefaultAcceptHosts {
			opts.AcceptHosts = append(opts.AcceptHosts, regexp.MustCompile(h))
		}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{src: src, opts: opts, history: model.NewHistory(opts.History), changed: make(chan struct{})}
	s.rebuild()
	s.routes()
	return s
}

// Version counts the rebuilds; the event stream sends it.
func (s *Server) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

func (s *Server) current() (*model.Model, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model, s.version
}

// rebuild builds the model from a new snapshot and wakes the streams.
func (s *Server) rebuild() {
	in := s.src.Snapshot()
	in.Now = s.opts.Now()
	m := model.Build(in)
	s.mu.Lock()
	s.model = m
	s.version++
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

func (s *Server) sample() {
	m, _ := s.current()
	s.mu.Lock()
	s.history.Add(s.opts.Now(), m.Queues())
	s.mu.Unlock()
}

// Run rebuilds the model after changes, no more often than Coalesce, and
// samples the queues' shares, until ctx ends.
func (s *Server) Run(ctx context.Context) {
	s.sample()
	tick := time.NewTicker(s.opts.SampleEvery)
	defer tick.Stop()
	var wait <-chan time.Time
	dirty := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.src.Changed():
			if wait == nil {
				s.rebuild()
				wait = time.After(s.opts.Coalesce)
			} else {
				dirty = true
			}
		case <-wait:
			wait = nil
			if dirty {
				dirty = false
				s.rebuild()
				wait = time.After(s.opts.Coalesce)
			}
		case <-tick.C:
			s.sample()
		}
	}
}

// ServeHTTP serves the page and the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hostAccepted(r.Host) {
		http.Error(w, fmt.Sprintf("host %q is not accepted: the dashboard answers only to loopback names (see --accept-hosts)", r.Host), http.StatusForbidden)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'")
	s.mux.ServeHTTP(w, r)
}

func (s *Server) hostAccepted(host string) bool {
	for _, re := range s.opts.AcceptHosts {
		if re.MatchString(host) {
			return true
		}
	}
	return false
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.mux.Handle("GET /", http.FileServerFS(web.Files))
	s.mux.HandleFunc("GET /api/summary", s.summary)
	s.mux.HandleFunc("GET /api/queues", s.queues)
	s.mux.HandleFunc("GET /api/queues/{name}/history", s.queueHistory)
	s.mux.HandleFunc("GET /api/jobs", s.jobs)
	s.mux.HandleFunc("GET /api/jobs/{kind}/{namespace}/{name}", s.job)
	s.mux.HandleFunc("GET /api/hypernodes", s.hyperNodes)
	s.mux.HandleFunc("GET /api/nodes", s.nodes)
	s.mux.HandleFunc("GET /api/federation", s.federation)
	s.mux.HandleFunc("GET /api/watch", s.watch)
}

// Summary is the answer of /api/summary.
type Summary struct {
	Version uint64       `json:"version"`
	Now     time.Time    `json:"now"`
	Scope   string       `json:"scope"`
	Caldera version.Info `json:"caldera"`
	model.Totals
}

func (s *Server) summary(w http.ResponseWriter, _ *http.Request) {
	m, v := s.current()
	writeJSON(w, Summary{Version: v, Now: m.Now(), Scope: s.src.Scope(), Caldera: version.Get(), Totals: m.Totals()})
}

// Versioned wraps an answer with the version of the model it came from.
type Versioned[T any] struct {
	Version uint64 `json:"version"`
	Items   T      `json:"items"`
}

func (s *Server) queues(w http.ResponseWriter, _ *http.Request) {
	m, v := s.current()
	writeJSON(w, Versioned[[]model.Queue]{Version: v, Items: m.Queues()})
}

func (s *Server) queueHistory(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	series := s.history.Series(r.PathValue("name"))
	s.mu.Unlock()
	writeJSON(w, series)
}

func (s *Server) hyperNodes(w http.ResponseWriter, _ *http.Request) {
	m, v := s.current()
	writeJSON(w, Versioned[[]model.HyperNode]{Version: v, Items: m.HyperNodes()})
}

// FederationAnswer is the answer of /api/federation.
type FederationAnswer struct {
	Version uint64 `json:"version"`
	model.Federation
}

func (s *Server) federation(w http.ResponseWriter, _ *http.Request) {
	m, v := s.current()
	writeJSON(w, FederationAnswer{Version: v, Federation: m.Federation()})
}

// JobsAnswer is the answer of /api/jobs.
type JobsAnswer struct {
	Version uint64 `json:"version"`
	model.JobPage
}

// NodesAnswer is the answer of /api/nodes.
type NodesAnswer struct {
	Version uint64 `json:"version"`
	model.NodePage
}

func (s *Server) jobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := model.JobFilter{Queue: q.Get("queue"), Namespace: q.Get("namespace"), Phase: q.Get("phase"), Kind: q.Get("kind"),
		Search: q.Get("search"), Sort: q.Get("sort")}
	switch f.Sort {
	case "", "name", "newest":
	default:
		badRequest(w, fmt.Errorf("sort %q: give name or newest", f.Sort))
		return
	}
	switch f.Kind {
	case "", model.KindJob, model.KindPodGroup:
	default:
		badRequest(w, fmt.Errorf("kind %q: give %s or %s", f.Kind, model.KindJob, model.KindPodGroup))
		return
	}
	var err error
	if f.Page, f.PageSize, err = paging(q.Get("page"), q.Get("pageSize")); err != nil {
		badRequest(w, err)
		return
	}
	m, v := s.current()
	writeJSON(w, JobsAnswer{Version: v, JobPage: m.Jobs(f)})
}

func (s *Server) nodes(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := model.NodeFilter{Search: q.Get("search"), HyperNode: q.Get("hyperNode")}
	var err error
	if f.Page, f.PageSize, err = paging(q.Get("page"), q.Get("pageSize")); err != nil {
		badRequest(w, err)
		return
	}
	m, v := s.current()
	writeJSON(w, NodesAnswer{Version: v, NodePage: m.Nodes(f)})
}

// paging reads the page parameters: page from 1, pageSize from 1 to
// model.MaxPageSize; empty means the defaults.
func paging(page, size string) (int, int, error) {
	p, n := 1, 0
	var err error
	if page != "" {
		if p, err = strconv.Atoi(page); err != nil || p < 1 {
			return 0, 0, fmt.Errorf("page %q: give a whole number from 1", page)
		}
	}
	if size != "" {
		if n, err = strconv.Atoi(size); err != nil || n < 1 || n > model.MaxPageSize {
			return 0, 0, fmt.Errorf("pageSize %q: give a whole number from 1 to %d", size, model.MaxPageSize)
		}
	}
	return p, n, nil
}

// JobAnswer is the answer of /api/jobs/{kind}/{namespace}/{name}.
type JobAnswer struct {
	Version uint64 `json:"version"`
	model.JobDetail
	// EventsError says why the explanation lacks the events, if it does.
	EventsError string `json:"eventsError,omitempty"`
}

func (s *Server) job(w http.ResponseWriter, r *http.Request) {
	kind, ns, name := r.PathValue("kind"), r.PathValue("namespace"), r.PathValue("name")
	m, v := s.current()
	uids, ok := m.EventSubjects(kind, ns, name)
	if !ok {
		http.Error(w, fmt.Sprintf("%s %s/%s: not found", kind, ns, name), http.StatusNotFound)
		return
	}
	ans := JobAnswer{Version: v}
	events, err := s.src.Events(r.Context(), ns, uids)
	if err != nil {
		// The explanation is still worth showing without them.
		ans.EventsError = err.Error()
	}
	ans.JobDetail, _ = m.JobDetail(kind, ns, name, events)
	writeJSON(w, ans)
}

// watch streams server-sent events: "version" with the model's version now
// and after each rebuild, and a comment every 15 s to keep proxies from
// closing the stream.
func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported by this connection", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		s.mu.Lock()
		v, changed := s.version, s.changed
		s.mu.Unlock()
		if _, err := fmt.Fprintf(w, "event: version\ndata: %d\n\n", v); err != nil {
			return
		}
		flusher.Flush()
		for waiting := true; waiting; {
			select {
			case <-r.Context().Done():
				return
			case <-changed:
				waiting = false
			case <-keepAlive.C:
				if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
					return
				}
				flusher.Flush()
			}
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := json.NewEncoder(w).Encode(v); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
		klog.V(4).InfoS("Writing an answer", "err", err)
	}
}

func badRequest(w http.ResponseWriter, err error) {
	http.Error(w, err.Error(), http.StatusBadRequest)
}

// Listen listens on the address and says where the dashboard is.
func Listen(address string) (net.Listener, string, error) {
	l, err := net.Listen("tcp", address)
	if err != nil {
		return nil, "", fmt.Errorf("--address %s: %w", address, err)
	}
	host, port, _ := net.SplitHostPort(l.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() && ip.To4() != nil {
		host = "127.0.0.1"
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return l, "http://" + host + ":" + port + "/", nil
}
