package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// cpuProfiler fetches a process's CPU profile (caldera-scheduler's, or the
// API server's) in consecutive chunks of profileChunk until stopped: a
// run's length is not known in advance, and `go tool pprof` merges the
// chunk files into one profile. After each chunk it also keeps a snapshot
// of the heap (<prefix>-heap-NN.pprof), to read what the memory held at the
// run's peak.
type cpuProfiler struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	files  []string
	err    error
}

func startCPUProfiler(ctx context.Context, src pprofSource, prefix string) *cpuProfiler {
	ctx, cancel := context.WithCancel(ctx)
	p := &cpuProfiler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for i := 0; ctx.Err() == nil; i++ {
			path := fmt.Sprintf("%s-%02d.pprof", prefix, i)
			err := src.fetch("profile", path, profileChunk)
			if err == nil {
				// A heap snapshot is for reading by hand; one that fails
				// does not fail the run.
				_ = src.fetch("heap", fmt.Sprintf("%s-heap-%02d.pprof", prefix, i), 0)
			}
			p.mu.Lock()
			if err != nil {
				p.err = errors.Join(p.err, err)
			} else {
				p.files = append(p.files, path)
			}
			p.mu.Unlock()
			if err != nil {
				// The endpoint may not be up yet.
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}
	}()
	return p
}

// pprofSource is a process's pprof endpoint: its base URL and the client
// that may ask it.
type pprofSource struct {
	base   string
	client *http.Client
}

// plainPprof is a pprof endpoint on a plain loopback listener.
func plainPprof(addr string) pprofSource {
	return pprofSource{base: "http://" + addr, client: &http.Client{}}
}

// fetch asks for a profile of kind ("profile" for CPU over d, "heap" for a
// snapshot) and writes it to path. It is not cancelled: the chunk in flight
// when the run ends is kept whole.
func (s pprofSource) fetch(kind, path string, d time.Duration) error {
	url := fmt.Sprintf("%s/debug/pprof/%s", s.base, kind)
	if d > 0 {
		url += fmt.Sprintf("?seconds=%d", int(d.Seconds()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s profile: %s", kind, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// stop waits for the chunk in flight and returns the files written.
func (p *cpuProfiler) stop() ([]string, error) {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.files, p.err
}
