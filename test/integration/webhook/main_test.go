//go:build integration

// Package webhook tests caldera-webhook against a real API server: the
// webhook runs in this process, registers itself with a url clientConfig and
// a self-signed CA, and the tests send it objects through the API server.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/cmd/caldera-webhook/app"
	"github.com/caldera-sh/caldera/cmd/caldera-webhook/app/options"
	"github.com/caldera-sh/caldera/pkg/component"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

var fw *framework.Framework

// TestMain is framework.Main with one step more: the webhook stops before
// the control plane, whose API server otherwise waits for the webhook's
// watches when it shuts down.
func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	f, err := framework.Start(ctx, framework.Options{})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the integration control plane: %v\n", err)
		os.Exit(1)
	}
	fw = f
	code := m.Run()
	if err := stopWebhook(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the webhook: %v\n", err)
		code = max(code, 1)
	}
	if err := f.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the integration control plane: %v\n", err)
		code = max(code, 1)
	}
	if code == 0 {
		_ = os.RemoveAll(f.Dir)
	} else {
		fmt.Fprintf(os.Stderr, "control-plane logs kept in %s\n", f.Dir)
	}
	os.Exit(code)
}

// server is the webhook running in this process. Tests share it; a test
// that stops it starts it again before it ends.
var server struct {
	mu     sync.Mutex
	port   int
	cancel context.CancelFunc
	done   chan error
}

const configName = "caldera-webhook-test"

// webhookUp starts the webhook unless it runs, and returns once the API
// server calls it.
func webhookUp(t *testing.T) {
	t.Helper()
	server.mu.Lock()
	defer server.mu.Unlock()
	if server.cancel != nil {
		return
	}
	if server.port == 0 {
		port, err := controlplane.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		server.port = port
	}
	health, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	o := options.NewOptions()
	o.Kubeconfig = fw.Kubeconfig()
	o.BindAddress = "127.0.0.1"
	o.Port = server.port
	o.CertDir = filepath.Join(fw.Dir, "webhook-certs")
	o.URLBase = fmt.Sprintf("https://127.0.0.1:%d", server.port)
	o.ExtraSANs = []string{"127.0.0.1"}
	o.WebhookConfigName = configName
	o.HealthProbeBindAddress = fmt.Sprintf("127.0.0.1:%d", health)
	c, err := component.Configure(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, c) }()
	server.cancel, server.done = cancel, done
	started := false
	defer func() {
		if !started { // do not leave a half-started webhook to later tests
			cancel()
			server.cancel, server.done = nil, nil
		}
	}()

	readyURL := fmt.Sprintf("http://127.0.0.1:%d/readyz", health)
	poll.Eventually(t, t.Context(), 2*time.Minute, "the webhook to be ready", func() (bool, string) {
		select {
		case err := <-done:
			t.Fatalf("waiting for the webhook to be ready: the webhook exited: %v", err)
		default:
		}
		resp, err := http.Get(readyURL)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	// The API server picks the configurations up asynchronously; probe
	// until both the mutating and the validating webhooks answer.
	poll.Eventually(t, t.Context(), time.Minute, "the API server to call the webhook", func() (bool, string) {
		ctx := t.Context()
		probe := queue("probe").Hierarchy("probe", "1").Parent("no-such-parent").Obj()
		err := fw.Client.Create(ctx, probe, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "denied the request") {
			return false, fmt.Sprintf("a queue under a missing parent: %v", err)
		}
		mutated := queue("probe").Hierarchy("probe", "1").Obj()
		if err := fw.Client.Create(ctx, mutated, client.DryRunAll); err != nil {
			return false, err.Error()
		}
		got := mutated.Annotations["volcano.sh/hierarchy"]
		return got == "root/probe", fmt.Sprintf("hierarchy annotation %q", got)
	})
	started = true
}

// webhookDown stops the webhook; its configurations stay.
func webhookDown(t *testing.T) {
	t.Helper()
	if err := stopWebhook(); err != nil {
		t.Fatal(err)
	}
}

func stopWebhook() error {
	server.mu.Lock()
	defer server.mu.Unlock()
	if server.cancel == nil {
		return nil
	}
	server.cancel()
	defer func() { server.cancel, server.done = nil, nil }()
	select {
	case err := <-server.done:
		return err
	case <-time.After(30 * time.Second):
		return errors.New("the webhook did not stop")
	}
}

// create creates objects, failing the test on any error.
func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := fw.Client.Create(t.Context(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

func namespace(name string, annotations map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
}

func priorityClass(name string, value int32) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
}

// succeeded is a poll condition of err: it holds when err is nil.
func succeeded(err error) (bool, string) { return err == nil, fmt.Sprint(err) }

// refusedWith returns nil if err is a refusal by one of the webhooks that
// contains want, Invalid, with every field error on a path.
func refusedWith(err error, want string) error {
	if err == nil {
		return errors.New("accepted")
	}
	if !strings.Contains(err.Error(), "denied the request") {
		return fmt.Errorf("not refused by a webhook: %w", err)
	}
	if !strings.Contains(err.Error(), want) {
		return fmt.Errorf("refusal does not contain %q: %w", want, err)
	}
	if !apierrors.IsInvalid(err) {
		return fmt.Errorf("refusal is not Invalid: %w", err)
	}
	// The API server's line for CEL rules it skipped after a schema error:
	// the webhook refuses such values first.
	if strings.Contains(err.Error(), "<nil>") {
		return fmt.Errorf("refusal has a field error without a path: %w", err)
	}
	return nil
}
