//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/localenv"
	"github.com/caldera-sh/caldera/test/fedenv"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestMetricsEndpoints: every member component, run as in a cluster under
// its own service account, serves its metrics over HTTPS only, refuses a
// caller without a token (401) and one whose token the API server accepts
// but who lacks get on /metrics (403), and answers the metrics reader
// (ClusterRole caldera-metrics-reader) with its metrics; the scheduler's
// explanations answer the same way.
func TestMetricsEndpoints(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	binDir, err := controlplane.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	env, err := localenv.Start(ctx, localenv.Options{
		BinDir: binDir, Dir: filepath.Join(t.TempDir(), "env"),
		Components: []string{localenv.ComponentWebhook, localenv.ComponentScheduler, localenv.ComponentControllerManager, localenv.ComponentAgent},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	}()
	reader, err := env.MetricsToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A service account the API server knows, with no grant.
	c, err := fedenv.ClientFor(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	stranger := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "stranger"}}
	if err := c.Create(ctx, stranger); err != nil {
		t.Fatal(err)
	}
	tr := &authenticationv1.TokenRequest{}
	if err := c.SubResource("token").Create(ctx, stranger, tr); err != nil {
		t.Fatal(err)
	}

	// Each component's own metrics, as a sign the answer is its own.
	own := map[string]string{
		localenv.ComponentScheduler:         "go_goroutines",
		localenv.ComponentControllerManager: "rest_client_requests_total",
		localenv.ComponentWebhook:           "rest_client_requests_total",
	}
	var agents int
	for name, url := range env.MetricsURLs {
		want := own[name]
		if strings.HasPrefix(name, localenv.ComponentAgent+"-") {
			want, agents = "caldera_agent_", agents+1
		}
		if want == "" {
			t.Errorf("unexpected metrics endpoint of %s", name)
			continue
		}
		if !strings.HasPrefix(url, "https://") {
			t.Errorf("%s serves metrics at %s", name, url)
			continue
		}
		if code, body := fetch(ctx, t, "http"+strings.TrimPrefix(url, "https"), ""); code != http.StatusBadRequest || strings.Contains(body, want) {
			t.Errorf("%s over plain HTTP: %d %.200q, want 400 and no metrics", name, code, body)
		}
		if code, body := fetch(ctx, t, url, ""); code != http.StatusUnauthorized || strings.Contains(body, want) {
			t.Errorf("%s without a token: %d %.200q, want 401", name, code, body)
		}
		if code, body := fetch(ctx, t, url, tr.Status.Token); code != http.StatusForbidden || strings.Contains(body, want) {
			t.Errorf("%s for a service account without the grant: %d %.200q, want 403", name, code, body)
		}
		// An agent publishes its readings once it made one.
		poll.Eventually(t, ctx, time.Minute, name+"'s metrics for the reader", func() (bool, string) {
			code, body := fetch(ctx, t, url, reader)
			return code == http.StatusOK && strings.Contains(body, want), fmt.Sprintf("%d %.300q", code, body)
		})
	}
	if agents == 0 || len(env.MetricsURLs) != 3+agents {
		t.Errorf("metrics endpoints %v, want the webhook's, the scheduler's, the controller manager's and the agents'", env.MetricsURLs)
	}

	// The scheduler's explanations: the reader may, the stranger may not.
	if code, body := fetch(ctx, t, env.ExplainURL, reader); code != http.StatusOK || !strings.HasPrefix(strings.TrimSpace(body), "[") {
		t.Errorf("explanations for the reader: %d %.300q, want a JSON list", code, body)
	}
	if code, _ := fetch(ctx, t, env.ExplainURL, tr.Status.Token); code != http.StatusForbidden {
		t.Errorf("explanations for the stranger: %d, want 403", code)
	}
}

// fetch GETs url with the bearer token (none when ""), trusting any
// certificate: the components' are self-signed.
func fetch(ctx context.Context, t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
