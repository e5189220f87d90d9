// Package app assembles caldera-controller-manager: a controller-runtime
// manager with leader election, health and metrics, and the controllers
// listed in controllers.go.
package app

import (
	"context"
	"flag"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	apischeme "github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app/options"
)

// NewControllerManagerCommand returns the caldera-controller-manager command.
func NewControllerManagerCommand(ctx context.Context) *cobra.Command {
	o := options.NewOptions()
	cmd := &cobra.Command{
		Use:          "caldera-controller-manager",
		Short:        "Caldera's controllers: Jobs, PodGroups, Queues, Commands, garbage collection",
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(controllerNames()); err != nil {
				return err
			}
			return Run(ctx, o)
		},
	}
	o.AddFlags(cmd.Flags(), controllerNames())
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	cmd.Flags().AddGoFlagSet(klogFlags)
	return cmd
}

// Run runs the manager until ctx ends.
func Run(ctx context.Context, o *options.Options) error {
	ctrl.SetLogger(klog.NewKlogr())
	cfg, err := restConfig(o)
	if err != nil {
		return err
	}
	scheme, err := apischeme.New()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              "caldera-controller-manager",
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		HealthProbeBindAddress:        o.HealthProbeBindAddress,
		Metrics:                       metricsserver.Options{BindAddress: o.MetricsBindAddress},
		GracefulShutdownTimeout:       &o.GracefulShutdown,
		Controller:                    config.Controller{MaxConcurrentReconciles: o.Workers},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	var watched []client.Object
	for _, c := range controllers() {
		if !o.Enabled(c.name) {
			continue
		}
		if err := c.setup(mgr, o); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", c.name, err)
		}
		watched = append(watched, c.watches)
	}
	if err := mgr.AddReadyzCheck("informers", informersSynced(mgr, watched)); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting controllers", "controllers", o.Controllers)
	return mgr.Start(ctx)
}

func restConfig(o *options.Options) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig == "" && o.Master == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags(o.Master, o.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("client configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.UserAgent = "caldera-controller-manager"
	return cfg, nil
}
