// Package local implements `calderactl local`: a complete Caldera environment
// on this machine, on loopback, with simulated nodes.
package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/pkg/localenv"
)

// NewCommand returns the `local` command group.
func NewCommand(ctx context.Context, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run a local Caldera environment with simulated nodes",
	}
	cmd.AddCommand(newUpCommand(ctx, out))
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
Caldera CRD installed, kwok simulating GPU and CPU nodes, and the default
queues. It runs in the foreground; Ctrl-C stops everything it started.`,
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
		Progress: func(format string, args ...any) {
			fmt.Fprintf(out, "  "+format+"\n", args...)
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, `
Caldera local environment is up (%s).

  kubeconfig: %s
  nodes:      %d simulated (kwok)
  components: caldera-webhook, caldera-scheduler, caldera-controller-manager
  logs:       %s

Try:
  export KUBECONFIG=%s
  bin/kubectl get nodes -L nvidia.com/gpu.product,network.caldera.sh/leaf
  bin/kubectl apply --server-side -f examples/quickstart/gang.yaml
  bin/kubectl get podgroup quickstart; bin/kubectl get pods -o wide
  bin/kubectl apply --server-side -f examples/batch/tensorflow-ps-worker.yaml
  bin/kubectl get vcjob tensorflow-dist-mnist; bin/kubectl get pods -l volcano.sh/job-name=tensorflow-dist-mnist
  bin/kubectl apply --server-side -f examples/ --recursive
  bin/kubectl get queues,vcjob,podgroups,hypernodes
  curl -s %s    # what keeps each pending job waiting

Press Ctrl-C to stop everything.
`, time.Since(start).Round(100*time.Millisecond), env.Kubeconfig, len(env.Nodes), o.dir, env.Kubeconfig, env.ExplainURL)
	<-ctx.Done()
	fmt.Fprintln(out, "\nstopping ...")
	if err := env.Stop(); err != nil {
		return err
	}
	fmt.Fprintln(out, "stopped.")
	return nil
}
