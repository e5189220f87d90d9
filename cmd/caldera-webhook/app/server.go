// Package app assembles caldera-webhook: a controller-runtime manager whose
// webhook server serves the handlers listed in pkg/webhooks, reading other
// objects from an informer cache, with certificates either supplied or
// self-signed, and optionally registering its own webhook configurations.
package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	apischeme "github.com/caldera-sh/caldera/apis/scheme"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/cmd/caldera-webhook/app/options"
	"github.com/caldera-sh/caldera/pkg/component"
	"github.com/caldera-sh/caldera/pkg/webhooks"
	"github.com/caldera-sh/caldera/pkg/webhooks/lookup"
)

// NewWebhookCommand returns the caldera-webhook command.
func NewWebhookCommand(ctx context.Context) *cobra.Command {
	return component.NewCommand("caldera-webhook", "Caldera's admission webhooks: defaults and validation of Volcano's APIs",
		options.NewOptions(), func(c *options.Config) error { return Run(ctx, c) })
}

// Run serves the webhooks until ctx ends.
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

	s, err := c.Serving.NewSetup()
	if err != nil {
		return err
	}
	s.Cached = cachedObjects()

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		WebhookServer:          s.Server,
		HealthProbeBindAddress: c.HealthProbeBindAddress,
		Metrics:                c.Metrics.Manager(c.MetricsBindAddress),
		Cache:                  cacheOptions(),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	s.Cache = mgr.GetCache()
	s.Hooks = webhooks.New(webhooks.Config{
		Scheme:         scheme,
		Reader:         lookup.Reader{Cached: mgr.GetCache(), Live: mgr.GetAPIReader()},
		SchedulerNames: c.SchedulerNames,
	})
	if err := s.Install(mgr, cfg); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting caldera-webhook", "address", c.Serving.BindAddress, "port", c.Serving.Port,
		"selfSigned", c.Serving.SelfSigned, "register", c.Serving.Register, "webhooks", len(s.Hooks))
	return mgr.Start(ctx)
}

// cachedObjects are the kinds the handlers read, whose informers are started
// before the webhook reports ready.
func cachedObjects() []client.Object {
	return []client.Object{
		&schedulingv1beta1.Queue{},
		&schedulingv1beta1.PodGroup{},
		&batchv1alpha1.Job{},
		&topologyv1alpha1.HyperNode{},
		&schedulingv1.PriorityClass{},
		&corev1.Namespace{},
	}
}

// cacheOptions keep the cache small: no managed fields anywhere, and Jobs
// without their pod templates (the handlers read only a cached Job's queue,
// phase and identity).
func cacheOptions() cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&batchv1alpha1.Job{}: {Transform: stripJob},
		},
	}
}

func stripJob(obj any) (any, error) {
	if j, ok := obj.(*batchv1alpha1.Job); ok {
		j.ManagedFields = nil
		for i := range j.Spec.Tasks {
			j.Spec.Tasks[i].Template = corev1.PodTemplateSpec{}
		}
	}
	return obj, nil
}

var _ toolscache.TransformFunc = stripJob

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
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "caldera-webhook"
	return cfg, nil
}
