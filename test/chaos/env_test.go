//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/pkg/agent/config"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/localenv"
)

// nodes is the simulated cluster: eight nodes of 16 CPUs for the load (128
// in all, the figure examples/preemption's queues divide) and half a CPU
// more each, which the load's whole-CPU pods never take, for the probes;
// two are colocation nodes with an agent each.
func nodes() []controlplane.NodeSpec {
	var out []controlplane.NodeSpec
	for i := range 8 {
		n := controlplane.NodeSpec{Name: fmt.Sprintf("chaos-%d", i), Labels: map[string]string{}, Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("16500m"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110"),
		}}
		if i < 2 {
			n.Labels[config.ColocationLabel] = "true"
		}
		out = append(out, n)
	}
	return out
}

// env is the cluster under test: the control plane, kube-controller-manager
// and every member component as a process, each as its service account.
type env struct {
	*localenv.Environment
	client    client.Client
	clientset kubernetes.Interface
	// readerTokens are the metrics reader's tokens the run used: no log
	// may hold them either.
	readerTokens []string
}

// metricsToken returns a new token of the metrics reader, remembered for
// the logs' scan.
func (e *env) metricsToken(ctx context.Context) (string, error) {
	token, err := e.MetricsToken(ctx)
	if err == nil {
		e.readerTokens = append(e.readerTokens, token)
	}
	return token, err
}

// startEnv brings the environment up with the queues and priority classes
// of examples/preemption and the scheduler configuration of
// examples/scheduler/preempt-reclaim.conf.
func startEnv(t *testing.T, ctx context.Context) *env {
	t.Helper()
	binDir, err := controlplane.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{localenv.ComponentScheduler, localenv.ComponentControllerManager, localenv.ComponentWebhook, localenv.ComponentAgent} {
		if _, err := os.Stat(filepath.Join(binDir, c)); err != nil {
			t.Fatalf("%v (make build builds it)", err)
		}
	}
	conf, err := os.ReadFile("../../examples/scheduler/preempt-reclaim.conf")
	if err != nil {
		t.Fatal(err)
	}
	dir := *keepDir
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e, err := localenv.Start(ctx, localenv.Options{
		BinDir: binDir, Dir: dir, Nodes: nodes(), SchedulerConfig: string(conf), Verbosity: *verbosity,
		Components: []string{localenv.ComponentKubeControllerManager, localenv.ComponentWebhook, localenv.ComponentScheduler,
			localenv.ComponentControllerManager, localenv.ComponentAgent},
		Progress: func(format string, args ...any) { t.Logf(format, args...) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Logf("stopping the environment: %v", err)
		}
		if t.Failed() {
			for _, name := range e.ComponentNames() {
				t.Logf("%s log (tail):\n%s", name, controlplane.Tail(filepath.Join(dir, name+".log"), 30))
			}
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", e.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := &env{Environment: e, client: c, clientset: cs}
	for _, f := range []string{"../../examples/preemption/00-priorityclasses.yaml", "../../examples/preemption/01-queues.yaml"} {
		if err := out.apply(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// apply creates the objects of a manifest file.
func (e *env) apply(ctx context.Context, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	objs, err := localenv.DecodeManifests(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, o := range objs {
		if err := e.client.Create(ctx, o); err != nil {
			return fmt.Errorf("%s: creating %s %s: %w", path, o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// secretsIn returns the credentials of the environment: every bearer token
// a kubeconfig under dir holds (the administrator's and each component's
// service account token) and the API server's token file's.
func secretsIn(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch {
		case strings.HasSuffix(path, "kubeconfig"):
			cfg, err := clientcmd.LoadFromFile(path)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			for _, a := range cfg.AuthInfos {
				if a.Token != "" {
					out = append(out, a.Token)
				}
			}
		case filepath.Base(path) == "tokens.csv":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, line := range strings.Split(string(b), "\n") {
				if tok, _, ok := strings.Cut(line, ","); ok && tok != "" {
					out = append(out, tok)
				}
			}
		}
		return nil
	})
	return out, err
}

// checkLogsHoldNoSecrets fails the test for every log under dir that
// contains a credential of the environment (those under dir, and the
// others given) or a private key.
func checkLogsHoldNoSecrets(t *testing.T, dir string, others ...string) {
	t.Helper()
	secrets, err := secretsIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets) < 5 {
		t.Fatalf("found %d credentials under %s, want the administrator's and every component's", len(secrets), dir)
	}
	secrets = append(secrets, others...)
	logs := 0
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".log") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		logs++
		text := string(b)
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds a bearer token (%s...)", path, s[:8])
			}
		}
		if strings.Contains(text, "PRIVATE KEY") {
			t.Errorf("%s holds a private key", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if logs < 6 {
		t.Fatalf("scanned %d logs under %s, want every component's and the control plane's", logs, dir)
	}
}
