package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// EtcdOptions configure an etcd server.
type EtcdOptions struct {
	// BinDir holds the etcd binary.
	BinDir string
	// Dir holds the data directory and the log.
	Dir string
	// ClientPort is the client port; 0 picks a free one. The peer port is
	// picked freely.
	ClientPort int
	// StartTimeout bounds the wait for health; 0 means 30s.
	StartTimeout time.Duration
}

// Etcd is a running single-member etcd on loopback.
type Etcd struct {
	// URL is the client URL, e.g. http://127.0.0.1:2379.
	URL          string
	proc         *process
	startTimeout time.Duration
}

// StartEtcd starts etcd and waits until it reports healthy.
func StartEtcd(ctx context.Context, o EtcdOptions) (*Etcd, error) {
	data := filepath.Join(o.Dir, "etcd-data")
	_, statErr := os.Stat(data)
	fresh := os.IsNotExist(statErr)
	return onFreePorts(func() (*Etcd, error) {
		e, err := startEtcd(ctx, o)
		if err != nil && fresh {
			// Nothing was stored yet: the next attempt starts clean.
			_ = os.RemoveAll(data)
		}
		return e, err
	})
}

func startEtcd(ctx context.Context, o EtcdOptions) (*Etcd, error) {
	bin, err := findBinary(o.BinDir, "etcd")
	if err != nil {
		return nil, err
	}
	clientPort, err := portOrFree(o.ClientPort)
	if err != nil {
		return nil, err
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, err
	}
	clientURL := "http://" + hostPort(clientPort)
	peerURL := "http://" + hostPort(peerPort)
	args := []string{
		"--name=caldera",
		"--data-dir=" + filepath.Join(o.Dir, "etcd-data"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=caldera=" + peerURL,
		"--unsafe-no-fsync",
		"--quota-backend-bytes=8589934592",
		"--log-level=warn",
	}
	p, err := startProcess("etcd", bin, args, o.Dir)
	if err != nil {
		return nil, err
	}
	e := &Etcd{URL: clientURL, proc: p, startTimeout: o.StartTimeout}
	if err := e.waitHealthy(ctx); err != nil {
		_ = p.stop()
		return nil, fmt.Errorf("starting etcd: %w", err)
	}
	return e, nil
}

// waitHealthy waits until etcd reports healthy.
func (e *Etcd) waitHealthy(ctx context.Context) error {
	timeout := e.startTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	return waitFor(wctx, e.proc, "etcd health", func() error { return httpOK(client, e.URL+"/health") })
}

// Restart kills etcd (SIGKILL, as a crash would) and starts it again on
// the same data and ports, waiting until it is healthy.
func (e *Etcd) Restart(ctx context.Context) error {
	p, err := e.proc.restart()
	if err != nil {
		return err
	}
	e.proc = p
	return e.waitHealthy(ctx)
}

// Stop stops etcd. Stop the API servers that use it first.
func (e *Etcd) Stop() error {
	if e == nil {
		return nil
	}
	return e.proc.stop()
}

// Compact compacts etcd's history up to its current revision, as the API
// server's periodic compaction does, so that a watch or list from an older
// resource version is answered "too old resource version". It returns the
// revision compacted to.
func (e *Etcd) Compact(ctx context.Context) (int64, error) {
	var rng struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	// Any key: the answer's header carries the store's revision.
	if err := e.gateway(ctx, "/v3/kv/range", map[string]any{"key": "AA==", "limit": 1}, &rng); err != nil {
		return 0, err
	}
	rev, err := strconv.ParseInt(rng.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("etcd revision %q: %w", rng.Header.Revision, err)
	}
	err = e.gateway(ctx, "/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}, nil)
	// Compacted already to this revision: nothing was written since.
	if err != nil && !strings.Contains(err.Error(), "has been compacted") {
		return 0, err
	}
	return rev, nil
}

// gateway posts a request to etcd's JSON gateway and decodes the answer.
func (e *Etcd) gateway(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, strings.TrimSpace(string(b)))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
