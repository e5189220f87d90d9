package datadep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// HTTP asks a catalog service where data lives. The contract:
//
//	POST <URL>
//	Content-Type: application/json
//
//	{"system": "amoro", "type": "table", "name": "catalog.db.events",
//	 "attributes": {"partition": "2026-12-01"}}
//
// answered by
//
//	200 {"clusterNames": ["member-b"], "ttlSeconds": 600}
//	404 the catalog does not know the data (the claim cannot be resolved)
//
// Any other status, a malformed body, or no answer within the timeout is a
// failure of the catalog: the claim stays unresolved and is asked again.
// ttlSeconds is optional (0 or absent: the answer holds until the
// DataSource is changed); clusterNames must name at least one cluster.
type HTTP struct {
	// ProviderName names the provider in messages ("http" when empty).
	ProviderName string
	URL          string
	Client       *http.Client
	// Timeout bounds one lookup (10 s when 0).
	Timeout time.Duration
	// Header is added to each request (for example an Authorization).
	Header http.Header
}

// httpAnswer is the body of a 200 answer.
type httpAnswer struct {
	ClusterNames []string `json:"clusterNames"`
	TTLSeconds   int64    `json:"ttlSeconds,omitempty"`
}

// Name implements Provider.
func (h *HTTP) Name() string {
	if h.ProviderName != "" {
		return h.ProviderName
	}
	return "http"
}

// Resolve implements Provider.
func (h *HTTP) Resolve(ctx context.Context, q Query) (Answer, error) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(q)
	if err != nil {
		return Answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return Answer{}, fmt.Errorf("provider %s: %w", h.Name(), err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, vs := range h.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("provider %s: asking %s about %s: %w", h.Name(), h.URL, q, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Answer{}, fmt.Errorf("provider %s: reading the answer about %s: %w", h.Name(), q, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return Answer{}, fmt.Errorf("provider %s does not know %s: %w", h.Name(), q, ErrUnknown)
	default:
		return Answer{}, fmt.Errorf("provider %s answered %s about %s: %s", h.Name(), resp.Status, q, excerpt(raw))
	}
	var a httpAnswer
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&a); err != nil {
		return Answer{}, fmt.Errorf("provider %s answered %s with a body that is not the contract's JSON: %w", h.Name(), q, err)
	}
	if a.TTLSeconds < 0 {
		return Answer{}, errors.New("provider " + h.Name() + " answered a negative ttlSeconds")
	}
	return Answer{ClusterNames: a.ClusterNames, TTL: time.Duration(a.TTLSeconds) * time.Second}, nil
}

// excerpt is the start of a body, for messages.
func excerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
