//go:build integration

// Package dashboard runs `calderactl dashboard` against a real API server
// with Caldera's scheduler and controller manager and kwok nodes: its
// answers against the objects, a user's RBAC limits, and the page in a
// real browser (Debian's Chromium, headless).
package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/cmd/calderactl/app"
	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	var nodes []controlplane.NodeSpec
	for i := range 3 {
		nodes = append(nodes, controlplane.NodeSpec{Name: fmt.Sprintf("n%d", i), Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110"),
		}})
	}
	nodes = append(nodes, controlplane.NodeSpec{Name: "gpu-0", Capacity: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"), corev1.ResourcePods: resource.MustParse("110"),
		schedulingv1beta1.GPUNumberResource: resource.MustParse("4"), schedulingv1beta1.GPUMemoryResource: resource.MustParse("64000"),
	}})
	os.Exit(framework.Main(m, framework.Options{Nodes: nodes, Users: []string{"alice"}, Setup: func(ctx context.Context, f *framework.Framework) (func(), error) {
		for _, name := range []string{schedulingv1beta1.RootQueue, schedulingv1beta1.DefaultQueue} {
			q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}
			schedulingv1beta1.SetDefaults_Queue(q)
			if err := f.Client.Create(ctx, q); err != nil {
				return nil, err
			}
		}
		stopScheduler, err := f.StartScheduler(framework.SchedulerConfig)
		if err != nil {
			return nil, err
		}
		stopControllers := f.StartControllerManager(nil)
		return func() {
			for _, stop := range []func() error{stopControllers, stopScheduler} {
				if err := stop(); err != nil {
					fmt.Fprintln(os.Stderr, err)
				}
			}
		}, nil
	}}, &fw))
}

// dashboard runs `calderactl dashboard` with the args until the test ends
// and returns the address it serves.
func dashboard(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	r, w := io.Pipe()
	f := cmdutil.NewFactory(w)
	cmd := app.NewCommand(ctx, "calderactl", f)
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig, "dashboard", "--address", "127.0.0.1:0"}, args...))
	done := make(chan error, 1)
	go func() { done <- cmd.Execute(); w.Close() }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("calderactl dashboard: %v", err)
		}
	})
	line, err := bufio.NewReader(r).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, r) }()
	if err != nil {
		t.Fatalf("calderactl dashboard printed no address: %v (%v)", err, <-done)
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("calderactl dashboard said %q", line)
	}
	return strings.TrimSuffix(strings.TrimSpace(line[i:]), "/")
}

// get decodes the answer of a dashboard path.
func get(t *testing.T, base, path string, into any) {
	t.Helper()
	r, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(r.Body)
		t.Fatalf("GET %s: %s %s", path, r.Status, b)
	}
	if err := json.NewDecoder(r.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// eventually waits, through test/poll, until check returns "" (its
// other answers say what is still wrong).
func eventually(t *testing.T, timeout time.Duration, what string, check func() string) {
	t.Helper()
	poll.Eventually(t, t.Context(), timeout, what, func() (bool, string) {
		msg := check()
		return msg == "", msg
	})
}
