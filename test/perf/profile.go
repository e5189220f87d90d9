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

// cpuProfiler fetches caldera-scheduler's CPU profile in consecutive chunks
// of profileChunk until stopped: a run's length is not known in advance, and
// `go tool pprof` merges the chunk files into one profile.
type cpuProfiler struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	files  []string
	err    error
}

func startCPUProfiler(ctx context.Context, addr, prefix string) *cpuProfiler {
	ctx, cancel := context.WithCancel(ctx)
	p := &cpuProfiler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for i := 0; ctx.Err() == nil; i++ {
			path := fmt.Sprintf("%s-%02d.pprof", prefix, i)
			err := fetchProfile(addr, path, profileChunk)
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

// fetchProfile asks for a profile of d and writes it to path. It is not
// cancelled: the chunk in flight when the run ends is kept whole.
func fetchProfile(addr, path string, d time.Duration) error {
	client := &http.Client{Timeout: d + 30*time.Second}
	resp, err := client.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds())))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CPU profile: %s", resp.Status)
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
