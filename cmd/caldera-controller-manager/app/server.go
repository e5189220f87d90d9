// Package app assembles caldera-controller-manager: a controller-runtime
// manager with leader election, health and metrics, and the controllers
// listed in controllers.go.
package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	apischeme "github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app/options"
	"github.com/caldera-sh/caldera/pkg/component"
)

// NewControllerManagerCommand returns the caldera-controller-manager command.
func NewControllerManagerCommand(ctx context.Context) *cobra.Command {
	return component.NewCommand("caldera-controller-manager", "Caldera's controllers: Jobs, PodGroups, Queues, Commands, garbage collection",
		options.NewOptions(ControllerNames()), func(c *options.Config) error { return Run(ctx, c) })
}

// Run runs the manager until ctx ends.
func Run(ctx context.Context, c *options.Config) error {
	ctrl.SetLogger(klog.NewKlogr())
	cfg, err := restConfig(c)
	if err != nil {
		return err
	}
	scheme, err := apischeme.New()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		LeaderElection:                c.LeaderElect,
		LeaderElectionID:              "caldera-controller-manager",
		LeaderElectionNamespace:       c.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		HealthProbeBindAddress:        c.HealthProbeBindAddress,
		Metrics:                       c.Metrics.Manager(c.MetricsBindAddress),
		GracefulShutdownTimeout:       &c.GracefulShutdown,
		Controller:                    config.Controller{MaxConcurrentReconciles: c.Workers},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	var watched []client.Object
	for _, ctl := range controllers() {
		if !slices.Contains(c.Controllers, ctl.name) {
			continue
		}
		if err := ctl.setup(mgr, c); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", ctl.name, err)
		}
		watched = append(watched, ctl.watches)
	}
	if err := mgr.AddReadyzCheck("informers", informersSynced(mgr, c.LeaderElect, watched)); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting controllers", "controllers", c.Controllers)
	return mgr.Start(ctx)
}

func restConfig(c *options.Config) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if c.Kubeconfig == "" && c.Master == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags(c.Master, c.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("client configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = c.QPS, c.Burst
	cfg.UserAgent = "caldera-controller-manager"
	return cfg, nil
}
