// Package dashboard implements `calderactl dashboard`: a read-only web
// view of the queues, jobs, topology and nodes, served on loopback with
// the user's own credentials, as `kubectl proxy` serves the API.
package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
	"github.com/caldera-sh/caldera/pkg/dashboard/server"
	"github.com/caldera-sh/caldera/pkg/dashboard/watch"
)

// NewCommand returns `dashboard`.
func NewCommand(f *cmdutil.Factory) *cobra.Command {
	var address, karmadaKubeconfig, karmadaContext string
	var acceptHosts []string
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve a read-only web view of queues, jobs, topology and nodes",
		Long: `Dashboard serves a web page of what Caldera schedules: the queue tree with
each queue's allocated, deserved, guaranteed and capability amounts and its
share over time; jobs and PodGroups with their phase and, for one that waits,
the scheduler's reason in words; the HyperNode tree with its occupancy; and
the nodes with their GPU cards. The page updates itself as the cluster
changes.

The dashboard reads the cluster with your kubeconfig's credentials and only
reads (get, list, watch): it shows what you may list. Without
-n/--namespace it shows every namespace when you may list jobs, PodGroups and
pods in all of them, else your context's namespace.

With --karmada-kubeconfig it also shows the federation: the member clusters
Karmada reports, with their readiness and resources, and the work
caldera-global holds (its ResourceBindings that wait with no cluster),
with how long each has waited and caldera-global's reason. It reads the
Karmada API server with that kubeconfig's credentials, and only reads.`,
		Example: `  calderactl dashboard
  calderactl dashboard -n team-a --address 127.0.0.1:9000
  calderactl dashboard --karmada-kubeconfig ~/.kube/karmada.config`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hosts := make([]*regexp.Regexp, 0, len(acceptHosts))
			for _, h := range acceptHosts {
				re, err := regexp.Compile(h)
				if err != nil {
					return fmt.Errorf("--accept-hosts %q: %w", h, err)
				}
				hosts = append(hosts, re)
			}
			cfg, err := f.RESTConfig()
			if err != nil {
				return err
			}
			scheme, err := f.Scheme()
			if err != nil {
				return err
			}
			ns, err := f.Namespace()
			if err != nil {
				return err
			}
			o := watch.Options{Config: cfg, Scheme: scheme, Fallback: ns}
			if f.NamespaceGiven() {
				o.Namespace = ns
			}
			if karmadaContext != "" && karmadaKubeconfig == "" {
				return errors.New("--karmada-context: give --karmada-kubeconfig too")
			}
			if karmadaKubeconfig != "" {
				rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: karmadaKubeconfig}
				kc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: karmadaContext}).ClientConfig()
				if err != nil {
					return fmt.Errorf("--karmada-kubeconfig %s: %w", karmadaKubeconfig, err)
				}
				o.Karmada = kc
			}
			l, url, err := server.Listen(address)
			if err != nil {
				return err
			}
			defer l.Close()
			ctx := cmdutil.Context(cmd)
			w, err := watch.Start(ctx, o)
			if err != nil {
				return err
			}
			s := server.New(w, server.Options{AcceptHosts: hosts})
			go s.Run(ctx)
			hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-ctx.Done()
				shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = hs.Shutdown(shutdown)
			}()
			if o.Karmada != nil {
				fmt.Fprintf(f.Out, "Serving the dashboard of %s (%s) and of Karmada at %s at %s\n", cfg.Host, w.Scope(), o.Karmada.Host, url)
			} else {
				fmt.Fprintf(f.Out, "Serving the dashboard of %s (%s) at %s\n", cfg.Host, w.Scope(), url)
			}
			if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&address, "address", "127.0.0.1:8095", "the address to serve on")
	cmd.Flags().StringVar(&karmadaKubeconfig, "karmada-kubeconfig", "", "a kubeconfig of the Karmada API server: adds the federation page")
	cmd.Flags().StringVar(&karmadaContext, "karmada-context", "", "the context of --karmada-kubeconfig to use (its current one when empty)")
	cmd.Flags().StringArrayVar(&acceptHosts, "accept-hosts", server.DefaultAcceptHosts,
		"regular expressions of the Host headers to answer (the loopback names by default)")
	return cmd
}
