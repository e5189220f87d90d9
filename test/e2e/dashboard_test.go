//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/dashboard/server"
)

// startDashboard runs `calderactl dashboard` as a user of the member does,
// with the Karmada API server's kubeconfig for the federation page, and
// returns the address it serves on.
func startDashboard(t *testing.T, ctx context.Context, f *federation, member string) string {
	t.Helper()
	binDir, err := controlplane.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "calderactl"), "dashboard",
		"--kubeconfig", f.memberEnvs[member].Kubeconfig, "--karmada-kubeconfig", f.cluster.APIServer.Kubeconfig,
		"--address", "127.0.0.1:0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	serving := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if line := s.Text(); strings.HasPrefix(line, "Serving the dashboard") {
				serving <- line
			}
		}
		close(serving)
	}()
	select {
	case line, ok := <-serving:
		if !ok {
			t.Fatalf("calderactl dashboard ended without serving:\n%s", stderr.String())
		}
		if !strings.Contains(line, "and of Karmada at "+f.cluster.APIServer.RESTConfig().Host) {
			t.Errorf("calderactl dashboard says %q: it does not name the Karmada API server", line)
		}
		return line[strings.LastIndex(line, " ")+1:]
	case <-time.After(2 * time.Minute):
		t.Fatalf("calderactl dashboard not serving within 2 minutes:\n%s", stderr.String())
	}
	return ""
}

// federationPage reads the dashboard's federation page.
func federationPage(ctx context.Context, base string) (server.FederationAnswer, error) {
	var a server.FederationAnswer
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/api/federation", nil)
	if err != nil {
		return a, err
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return a, err
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		return a, fmt.Errorf("GET /api/federation: %s", r.Status)
	}
	return a, json.NewDecoder(r.Body).Decode(&a)
}
