// Package app assembles caldera-global: a controller-runtime manager on the
// Karmada API server serving the ResourceBinding webhook (every replica)
// and running the dispatcher (the leader).
package app

import (
	"context"
	"flag"
	"fmt"

	"github.com/spf13/cobra"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	apischeme "github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	"github.com/caldera-sh/caldera/pkg/federation/dispatcher"
	"github.com/caldera-sh/caldera/pkg/federation/karmada"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/pkg/federation/rbwebhook"
	"github.com/caldera-sh/caldera/pkg/webhooks"
)

// NewGlobalCommand returns the caldera-global command.
func NewGlobalCommand(ctx context.Context) *cobra.Command {
	o := options.NewOptions()
	cmd := &cobra.Command{
		Use:          "caldera-global",
		Short:        "Caldera's queues across Karmada member clusters: holds new bindings of queued work and releases them",
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Complete(cmd.Flags())
			if err := o.Validate(); err != nil {
				return err
			}
			return Run(ctx, o)
		},
	}
	o.AddFlags(cmd.Flags())
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	cmd.Flags().AddGoFlagSet(klogFlags)
	return cmd
}

// Webhooks are caldera-global's webhooks: the suspension of new
// ResourceBindings. It fails closed (Fail) with a short timeout: a binding
// the webhook cannot answer for is refused for now and created again by
// Karmada, which retries; failing open would let it past the queues.
func Webhooks(reader client.Reader) []webhooks.Webhook {
	return []webhooks.Webhook{{
		Name:     "suspend.resourcebindings.caldera.sh",
		Path:     "/resourcebindings/suspend",
		Handler:  &admission.Webhook{Handler: &rbwebhook.Handler{Reader: reader}, RecoverPanic: ptr.To(true)},
		Mutating: true,
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{workv1alpha2.GroupName},
				APIVersions: []string{workv1alpha2.SchemeGroupVersion.Version},
				Resources:   []string{"resourcebindings"},
				Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
			},
		}},
		FailurePolicy:  admissionregistrationv1.Fail,
		TimeoutSeconds: 5,
	}}
}

// Run runs caldera-global until ctx ends. o must be completed and valid.
func Run(ctx context.Context, o *options.Options) error {
	ctrl.SetLogger(klog.NewKlogr())
	cfg, err := restConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	scheme, err := apischeme.New()
	if err != nil {
		return err
	}
	if err := karmada.AddToScheme(scheme); err != nil {
		return err
	}
	s, err := o.NewSetup()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		WebhookServer:           s.Server,
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsBindAddress},
		Cache:                   cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        "caldera-global",
		LeaderElectionNamespace: o.LeaderElectionNamespace,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// Templates are read live: they are of any kind, and only at a
	// binding's creation.
	s.Hooks = Webhooks(mgr.GetAPIReader())
	if err := s.Install(mgr, cfg); err != nil {
		return err
	}
	d := dispatcher.New(mgr.GetClient(), mgr.GetCache(), mgr.GetEventRecorderFor("caldera-global"), clock.RealClock{}, dispatcher.Options{
		StarvationWait: o.StarvationWait, Coalesce: o.Coalesce, Heartbeat: o.Heartbeat, ReportGrace: o.ReportGrace,
	})
	if err := mgr.Add(manager.RunnableFunc(d.Run)); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting caldera-global", "address", o.BindAddress, "port", o.Port, "leaderElect", o.LeaderElect)
	return mgr.Start(ctx)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("client configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	cfg.UserAgent = "caldera-global"
	return cfg, nil
}
