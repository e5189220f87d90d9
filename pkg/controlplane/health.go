package controlplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
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
	if err := waitFor(wctx, p, name+" "+url, func() error { return httpOK(client, url) }); err != nil {
		_ = p.stop()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	return nil
}

// httpOK gets url and returns nil when it answers 200, else an error with
// the status and the start of the body (a /readyz?verbose answer names the
// failing checks).
func httpOK(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
}
