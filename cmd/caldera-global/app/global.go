// Package app assembles caldera-global: a controller-runtime manager on the
// Karmada API server serving the ResourceBinding webhook (every replica)
// and running the dispatcher (the leader).
package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	apischeme "github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/cmd/caldera-global/app/options"
	"github.com/caldera-sh/caldera/pkg/component"
	"github.com/caldera-sh/caldera/pkg/datadep"
	datadepcontroller "github.com/caldera-sh/caldera/pkg/datadep/controller"
	"github.com/caldera-sh/caldera/pkg/federation/clusterapi"
	dispatchcontroller "github.com/caldera-sh/caldera/pkg/federation/dispatch/controller"
	"github.com/caldera-sh/caldera/pkg/federation/inventory"
	"github.com/caldera-sh/caldera/pkg/federation/karmada"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/pkg/federation/rbwebhook"
	hyperjobcontroller "github.com/caldera-sh/caldera/pkg/hyperjob/controller"
	hyperjobwebhook "github.com/caldera-sh/caldera/pkg/hyperjob/webhook"
	"github.com/caldera-sh/caldera/pkg/webhooks"
)

// NewGlobalCommand returns the caldera-global command.
func NewGlobalCommand(ctx context.Context) *cobra.Command {
	return component.NewCommand("caldera-global", "Caldera's queues across Karmada member clusters: holds new bindings of queued work and releases them",
		options.NewOptions(), func(c *options.Config) error { return Run(ctx, c) })
}

// Webhooks are caldera-global's webhooks: the suspension of new
// ResourceBindings, and the defaulting and validation of HyperJobs against
// the members that members lists. The suspension fails closed (Fail) with
// a short timeout: a binding the webhook cannot answer for is refused for
// now and created again by Karmada, which retries; failing open would let
// it past the queues.
func Webhooks(s *runtime.Scheme, reader client.Reader, members func(context.Context) ([]clusterv1alpha1.Cluster, error), pools inventory.Pools) []webhooks.Webhook {
	hj := hyperjobwebhook.New()
	hj.Federation = hyperjobcontroller.Admission(members, pools)
	return append([]webhooks.Webhook{{
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
	}}, webhooks.HyperJobs(s, hj)...)
}

// Run runs caldera-global until ctx ends.
func Run(ctx context.Context, c *options.Config) error {
	ctrl.SetLogger(klog.NewKlogr())
	cfg, err := restConfig(c.Kubeconfig)
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
	if err := clusterapi.AddToScheme(scheme); err != nil {
		return err
	}
	s, err := c.Serving.NewSetup()
	if err != nil {
		return err
	}
	if c.LeaderElect {
		if err := leaseNamespaceExists(ctx, cfg, c.LeaderElectionNamespace); err != nil {
			return err
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		// Run may run more than once in a process (embedded, or in tests),
		// each time with one manager of its own: controller names are
		// unique within a manager, not within the process.
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		Scheme:                  scheme,
		WebhookServer:           s.Server,
		HealthProbeBindAddress:  c.HealthProbeBindAddress,
		Metrics:                 c.Metrics.Manager(c.MetricsBindAddress),
		Cache:                   cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		LeaderElection:          c.LeaderElect,
		LeaderElectionID:        "caldera-global",
		LeaderElectionNamespace: c.LeaderElectionNamespace,
		// A replica that stops (SIGTERM, a rollout) hands the Lease over at
		// once instead of leaving the others to wait for it to expire.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// Karmada's Clusters: the HyperJob webhook's members in every replica,
	// and the dispatcher's unless Cluster API is the inventory.
	members := &inventory.Karmada{Cache: mgr.GetCache(), Reader: mgr.GetClient()}
	inv, err := clusterInventory(c, cfg, scheme, mgr, members)
	if err != nil {
		return err
	}
	// Node pools are known where the inventory is started: in the leader.
	pools, _ := inv.(inventory.Pools)
	// Templates are read live: they are of any kind, and only at a
	// binding's creation.
	s.Hooks = Webhooks(scheme, mgr.GetAPIReader(), members.Clusters, pools)
	if err := s.Install(mgr, cfg); err != nil {
		return err
	}
	dm, err := dispatchcontroller.NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		return fmt.Errorf("registering the dispatcher's metrics: %w", err)
	}
	dopts := c.Dispatcher
	dopts.Inventory, dopts.Metrics = inv, dm
	d := dispatchcontroller.New(mgr.GetClient(), mgr.GetCache(), mgr.GetEventRecorderFor("caldera-global"), clock.RealClock{}, dopts)
	if err := mgr.Add(manager.RunnableFunc(d.Run)); err != nil {
		return err
	}
	reg := datadep.NewRegistry()
	reg.Default = &datadep.Static{List: func(ctx context.Context) ([]ddv1alpha1.DataSource, error) {
		var l ddv1alpha1.DataSourceList
		err := mgr.GetClient().List(ctx, &l)
		return l.Items, err
	}}
	for system, u := range c.DataProviders {
		if err := reg.Register(system, &datadep.HTTP{ProviderName: system, URL: u}); err != nil {
			return err
		}
	}
	claims := &datadepcontroller.Reconciler{Client: mgr.GetClient(), Registry: reg, Recorder: mgr.GetEventRecorderFor("caldera-global")}
	if err := claims.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the DataSourceClaim controller: %w", err)
	}
	if err := (&datadepcontroller.Reclaimer{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the DataSource reclaimer: %w", err)
	}
	hj := &hyperjobcontroller.Reconciler{Client: mgr.GetClient(), Inventory: inv, Recorder: mgr.GetEventRecorderFor("caldera-global"), StartTimeout: c.HyperJobStartTimeout, LostAfter: c.MemberLostAfter}
	if err := hj.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the HyperJob controller: %w", err)
	}
	klog.FromContext(ctx).Info("Starting caldera-global", "address", c.Serving.BindAddress, "port", c.Serving.Port, "leaderElect", c.LeaderElect)
	return mgr.Start(ctx)
}

// leaseNamespaceExists refuses to start when the namespace of the leader
// election Lease is missing on the Karmada API server: no replica could
// ever lead, and every new job would be held for good by the webhook. An
// identity that may not read namespaces is let through.
func leaseNamespaceExists(ctx context.Context, cfg *rest.Config, namespace string) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("client for the leader election check: %w", err)
	}
	err = c.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("--leader-election-namespace: namespace %q does not exist on the Karmada API server, so no replica could lead "+
			"and every new job would stay held: apply deploy/global/karmada there (it makes caldera-system), or name an existing namespace", namespace)
	case apierrors.IsForbidden(err):
		klog.FromContext(ctx).Info("Cannot check that the leader election namespace exists; grant get on namespaces", "namespace", namespace)
		return nil
	case err != nil:
		return fmt.Errorf("checking the leader election namespace %q: %w", namespace, err)
	}
	return nil
}

// clusterInventory is the source of member clusters of the dispatcher and
// the HyperJob controller: Karmada's (karmadaClusters) unless Cluster API is asked
// for.
func clusterInventory(c *options.Config, cfg *rest.Config, scheme *runtime.Scheme, mgr manager.Manager, karmadaClusters *inventory.Karmada) (inventory.Inventory, error) {
	if c.ClusterInventory != options.InventoryClusterAPI {
		if c.MemberNodePools {
			// Secrets are read when a member's Cluster changes, not
			// watched: only those the Clusters name are needed.
			karmadaClusters.Members = &inventory.Members{Karmada: mgr.GetClient(), Secrets: mgr.GetAPIReader(), Labels: c.PoolLabels}
		}
		return karmadaClusters, nil
	}
	mcfg := cfg
	if c.ClusterAPIKubeconfig != "" {
		var err error
		if mcfg, err = restConfig(c.ClusterAPIKubeconfig); err != nil {
			return nil, fmt.Errorf("--cluster-api-kubeconfig: %w", err)
		}
	}
	named, err := labels.NewRequirement(inventory.ClusterNameLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	copts := cache.Options{
		Scheme: scheme, DefaultTransform: cache.TransformStripManagedFields(),
		// Only the Secrets Cluster API writes for its clusters.
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: labels.NewSelector().Add(*named)}},
	}
	if c.ClusterAPINamespace != "" {
		copts.DefaultNamespaces = map[string]cache.Config{c.ClusterAPINamespace: {}}
	}
	mc, err := cache.New(mcfg, copts)
	if err != nil {
		return nil, fmt.Errorf("the Cluster API management cluster's cache: %w", err)
	}
	if err := mgr.Add(mc); err != nil {
		return nil, err
	}
	return &inventory.ClusterAPI{
		Management: mc, ManagementReader: mc, Karmada: mgr.GetCache(), KarmadaReader: mgr.GetClient(), Namespace: c.ClusterAPINamespace, Labels: c.PoolLabels,
	}, nil
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
