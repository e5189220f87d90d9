// Package local implements `calderactl local`: a complete Caldera environment
// on this machine, on loopback, with simulated nodes.
package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/localenv"
)

// NewCommand returns the `local` command group.
func NewCommand(ctx context.Context, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run a local Caldera environment with simulated nodes",
	}
	cmd.AddCommand(newUpCommand(ctx, out), newDownCommand(out), newStatusCommand(ctx, out))
	return cmd
}

func newDownCommand(out io.Writer) *cobra.Command {
	var dir string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the local environment that `local up` runs, as Ctrl-C does",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			pid, ok := localenv.Running(dir)
			if !ok {
				fmt.Fprintf(out, "no local environment is running from %s\n", dir)
				return nil
			}
			if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
				return fmt.Errorf("stopping pid %d: %w", pid, err)
			}
			fmt.Fprintf(out, "stopping the local environment (pid %d) ...\n", pid)
			deadline := time.Now().Add(timeout)
			for time.Now().Before(deadline) {
				if _, ok := localenv.Running(dir); !ok {
					fmt.Fprintln(out, "stopped.")
					return nil
				}
				time.Sleep(200 * time.Millisecond)
			}
			return fmt.Errorf("pid %d still runs after %s; its logs are in %s", pid, timeout, dir)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", defaultDir(), "directory of the environment's state")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for it to stop")
	return cmd
}

func newStatusCommand(ctx context.Context, out io.Writer) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say whether the local environment runs, and how to reach it",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			pid, ok := localenv.Running(dir)
			if !ok {
				fmt.Fprintf(out, "not running (state in %s); start it with: calderactl local up\n", dir)
				return nil
			}
			kubeconfig := localenv.KubeconfigPath(dir)
			fmt.Fprintf(out, "running (pid %d)\n  kubeconfig: %s\n", pid, kubeconfig)
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				fmt.Fprintf(out, "  API server: not answering: %v\n", err)
				return nil
			}
			fmt.Fprintf(out, "  API server: %s\n  nodes:      %d\n", cfg.Host, len(nodes.Items))
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", defaultDir(), "directory of the environment's state")
	return cmd
}

type upOptions struct {
	binDir string
	dir    string
}

func newUpCommand(ctx context.Context, out io.Writer) *cobra.Command {
	o := &upOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start etcd, kube-apiserver and kwok with simulated GPU and CPU nodes; stop on Ctrl-C",
		Long: `Start a local control plane on loopback: etcd, a kube-apiserver with every
Caldera CRD installed, kwok simulating GPU and CPU nodes, the default
queues, every Caldera member component (the agent on the CPU nodes, on
simulated cgroups), and a demo job. It runs in the foreground; Ctrl-C (or
calderactl local down) stops everything it started.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(ctx, out)
		},
	}
	cmd.Flags().StringVar(&o.binDir, "bin-dir", "", "directory of the control-plane binaries (default: $CALDERA_BIN_DIR or ./bin of the source tree)")
	cmd.Flags().StringVar(&o.dir, "dir", defaultDir(), "directory for the environment's state (kubeconfig, logs, data)")
	return cmd
}

func defaultDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "caldera", "local")
	}
	return filepath.Join(os.TempDir(), "caldera-local")
}

func (o *upOptions) run(ctx context.Context, out io.Writer) error {
	binDir := o.binDir
	if binDir == "" {
		var err error
		if binDir, err = controlplane.FindBinDir(); err != nil {
			return err
		}
	}
	start := time.Now()
	env, err := localenv.Start(ctx, localenv.Options{
		BinDir: binDir,
		Dir:    o.dir,
		Demo:   true,
		Progress: func(format string, args ...any) {
			fmt.Fprintf(out, "  "+format+"\n", args...)
		},
	})
	if err != nil {
		return err
	}
	ctl := filepath.Join(binDir, "calderactl")
	if _, err := os.Stat(ctl); err != nil {
		ctl = "calderactl"
	}
	fmt.Fprintf(out, `
Caldera local environment is up (%s).

  kubeconfig: %s
  nodes:      %d simulated (kwok): 8 GPU nodes (A100, H100) on two leaves, 4 CPU nodes
  components: caldera-webhook, caldera-scheduler, caldera-controller-manager,
              caldera-agent on the CPU nodes; kube-controller-manager and
              kube-scheduler (for pods that name no scheduler)
  demo:       job %s (a parameter server and 4 GPU workers, one gang)
  logs:       %s

Try:
  export KUBECONFIG=%s
  %s job list
  %s job view %s
  %s queue top
  %s job run sleeper --replicas 3 --requests cpu=2 -- sleep 600
  %s explain job sleeper
  bin/kubectl get nodes -L nvidia.com/gpu.product,network.caldera.sh/leaf
  bin/kubectl apply --server-side -f examples/ --recursive
  # what keeps each pending job waiting, as the scheduler last concluded
  # (its metrics endpoint: HTTPS, for a token the API server vouches for)
  curl -sk -H "Authorization: Bearer $(bin/kubectl -n %s create token %s)" %s

Stop it with Ctrl-C, or from another shell: %s local down
`, time.Since(start).Round(100*time.Millisecond), env.Kubeconfig, len(env.Nodes), localenv.DemoJob, o.dir, env.Kubeconfig,
		ctl, ctl, localenv.DemoJob, ctl, ctl, ctl, localenv.SystemNamespace, localenv.MetricsReader, env.ExplainURL, ctl)
	<-ctx.Done()
	fmt.Fprintln(out, "\nstopping ...")
	if err := env.Stop(); err != nil {
		return err
	}
	fmt.Fprintln(out, "stopped.")
	return nil
}
