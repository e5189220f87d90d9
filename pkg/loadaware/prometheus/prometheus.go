// Package prometheus reads the nodes' usage from Prometheus, the source
// Volcano's usage plugin reads (the scheduler configuration's
// metricsSource): the node exporter's CPU and memory metrics averaged over
// five minutes, one query for all nodes per resource. Queries and parsing
// are pure; Source runs them against a server.
package prometheus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/caldera-sh/caldera/pkg/loadaware"
)

// Window is the span the queries average over: Volcano's.
const Window = 5 * time.Minute

// The queries: each node's CPU and memory in use, in percent of the
// machine, averaged over Window, by the node exporter's instance label.
// Volcano queries them node by node; these ask for every node at once.
const (
	CPUQuery    = `avg_over_time((100 - (avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[5m])) * 100))[5m:30s])`
	MemoryQuery = `100 * avg_over_time((1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes)[5m:30s])`
)

// Capacity is a node's CPU (milli) and memory (bytes): a percentage of
// the machine is turned into an amount by it.
type Capacity struct {
	CPU, Memory int64
}

// Percentages are the query results: each instance's value.
type Percentages map[string]float64

// response is the query API's answer.
type response struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

// Parse reads a query API answer: an instant vector of one value per
// instance.
func Parse(body []byte) (Percentages, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query failed: %s: %s", r.ErrorType, r.Error)
	}
	if r.Data.ResultType != "vector" {
		return nil, fmt.Errorf("the answer is a %s, want a vector", r.Data.ResultType)
	}
	out := Percentages{}
	for _, s := range r.Data.Result {
		instance := s.Metric["instance"]
		text, ok := s.Value[1].(string)
		if instance == "" || !ok {
			continue
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("instance %s: value %q: %w", instance, text, err)
		}
		out[instance] = v
	}
	return out, nil
}

// Usages turns the percentages into each node's usage at at. An instance
// names a node by its name, or by its name and a port (node:9100). Nodes
// without both values are left out: their usage is unknown.
func Usages(cpu, mem Percentages, nodes map[string]Capacity, at time.Time) map[string]*loadaware.Usage {
	byNode := func(p Percentages) map[string]float64 {
		out := map[string]float64{}
		for instance, v := range p {
			name := instance
			if _, ok := nodes[name]; !ok {
				name, _, _ = strings.Cut(instance, ":")
			}
			if _, ok := nodes[name]; ok && !isNaN(v) {
				out[name] = v
			}
		}
		return out
	}
	c, m := byNode(cpu), byNode(mem)
	out := map[string]*loadaware.Usage{}
	for name, capa := range nodes {
		cv, ok1 := c[name]
		mv, ok2 := m[name]
		if !ok1 || !ok2 {
			continue
		}
		out[name] = &loadaware.Usage{At: at, Window: Window,
			CPU: int64(clamp(cv) / 100 * float64(capa.CPU)), Memory: int64(clamp(mv) / 100 * float64(capa.Memory))}
	}
	return out
}

func isNaN(v float64) bool { return v != v }

func clamp(v float64) float64 { return min(100, max(0, v)) }

// Source queries a Prometheus server.
type Source struct {
	// Address is the server's, such as http://prometheus.monitoring:9090.
	Address string
	Client  *http.Client
}

// Query runs an instant query at at.
func (s *Source) Query(ctx context.Context, query string, at time.Time) (Percentages, error) {
	u := strings.TrimRight(s.Address, "/") + "/api/v1/query?" + url.Values{
		"query": {query}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)},
	}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	p, err := Parse(body)
	if err != nil {
		return nil, fmt.Errorf("%s (HTTP %d): %w", s.Address, resp.StatusCode, err)
	}
	return p, nil
}

// Read queries every node's usage at at.
func (s *Source) Read(ctx context.Context, nodes map[string]Capacity, at time.Time) (map[string]*loadaware.Usage, error) {
	cpu, err := s.Query(ctx, CPUQuery, at)
	if err != nil {
		return nil, fmt.Errorf("CPU usage: %w", err)
	}
	mem, err := s.Query(ctx, MemoryQuery, at)
	if err != nil {
		return nil, fmt.Errorf("memory usage: %w", err)
	}
	return Usages(cpu, mem, nodes, at), nil
}

// Poll reads every node's usage every interval until ctx ends, and hands
// each node's to set; nodes lists the nodes to read. A failed read is
// logged and tried again at the next interval; nodes keep their last
// usage, which ages into staleness.
func (s *Source) Poll(ctx context.Context, interval time.Duration, nodes func() map[string]Capacity, set func(node string, u *loadaware.Usage), logf func(err error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		got, err := s.Read(ctx, nodes(), time.Now())
		if err != nil {
			logf(err)
		}
		for name, u := range got {
			set(name, u)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
