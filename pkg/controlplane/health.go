package controlplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"
)

// waitHealthy waits until url (a component's /healthz or /readyz on its
// self-signed loopback port) answers 200, within timeout (0 means 60s), and
// stops the process if it does not.
func waitHealthy(ctx context.Context, p *process, name, url string, timeout time.Duration) error {
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The serving certificate is self-signed; only health is asked.
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback health probe
	}
	if err := waitFor(wctx, p, name+" "+url, func() bool {
		resp, err := client.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		_ = p.stop()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	return nil
}
