// Package serving brings a webhook server into service: once it listens,
// it fills the cache the handlers read, writes the webhook configurations
// (or only the CA bundle into configurations installed otherwise),
// reports ready, and then renews self-signed certificates for as long as
// it runs. caldera-webhook and caldera-global both serve through it.
package serving

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/caldera-sh/caldera/pkg/webhooks"
	"github.com/caldera-sh/caldera/pkg/webhooks/certs"
	"github.com/caldera-sh/caldera/pkg/webhooks/registration"
)

// Setup is a manager runnable that brings the webhooks into service.
type Setup struct {
	Server webhook.Server
	// Cache and Cached: the informers of these kinds are started and
	// synced before the webhooks are registered.
	Cache  cache.Cache
	Cached []client.Object
	// Client writes the webhook configurations; it should not read from
	// the cache, which does not hold them.
	Client client.Client
	Hooks  []webhooks.Webhook
	// At most one of SelfSigned and Watcher is set.
	SelfSigned *certs.SelfSigned
	Watcher    *certwatcher.CertWatcher
	// CABundle is written when the certificate is supplied.
	CABundle []byte
	// Register writes the configurations; otherwise only the CA bundle is
	// injected into existing ones (with SelfSigned).
	Register   bool
	ConfigName string
	Target     registration.Target

	ready atomic.Bool
}

var (
	_ manager.Runnable               = &Setup{}
	_ manager.LeaderElectionRunnable = &Setup{}
)

// NeedLeaderElection is false: every replica serves.
func (s *Setup) NeedLeaderElection() bool { return false }

// ReadyCheck fails until the configurations are written.
func (s *Setup) ReadyCheck(*http.Request) error {
	if !s.ready.Load() {
		return errors.New("the webhook configurations are not written yet")
	}
	return nil
}

// Start implements manager.Runnable.
func (s *Setup) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("setup")
	ctx = klog.NewContext(ctx, logger)
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return s.Server.StartedChecker()(nil) == nil, nil
	}); err != nil {
		return fmt.Errorf("waiting for the webhook server: %w", err)
	}
	if s.Cache != nil {
		for _, obj := range s.Cached {
			if _, err := s.Cache.GetInformer(ctx, obj); err != nil {
				return fmt.Errorf("starting the informer for %T: %w", obj, err)
			}
		}
		if !s.Cache.WaitForCacheSync(ctx) {
			return errors.New("the cache did not sync")
		}
	}

	if s.Register || s.SelfSigned != nil {
		// Until the configurations are written the API server cannot call
		// the webhook; retry rather than exit, for configurations a
		// manifest installs a moment later.
		if err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := s.publish(ctx, s.currentBundle()); err != nil {
				logger.Error(err, "Writing the webhook configurations failed; retrying")
				return false, nil
			}
			return true, nil
		}); err != nil {
			return nil // ctx ended
		}
		logger.Info("Wrote the webhook configurations", "name", s.ConfigName, "register", s.Register)
	}
	s.ready.Store(true)

	if s.SelfSigned == nil {
		<-ctx.Done()
		return nil
	}
	go s.rotateOnHangup(ctx)
	return s.SelfSigned.Run(ctx, s.publish)
}

func (s *Setup) currentBundle() []byte {
	if s.SelfSigned != nil {
		return s.SelfSigned.CABundle()
	}
	return s.CABundle
}

// publish writes the webhook configurations with caBundle, or only the
// bundle when the configurations are installed by other means.
func (s *Setup) publish(ctx context.Context, caBundle []byte) error {
	if s.Register {
		m, v := registration.Configurations(s.ConfigName, s.Hooks, s.Target, caBundle)
		return registration.Apply(ctx, s.Client, m, v)
	}
	return registration.InjectCABundle(ctx, s.Client, s.ConfigName, caBundle)
}

// Install adds the setup to a manager built with s.Server as its webhook
// server, once s.Hooks are set: the certificate watcher, a client (not
// cached) that writes the configurations, the handlers, the health and
// readiness checks, and the setup itself.
func (s *Setup) Install(mgr manager.Manager, cfg *rest.Config) error {
	if s.Watcher != nil {
		if err := mgr.Add(s.Watcher); err != nil {
			return err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	s.Client = c
	// GetWebhookServer adds the server to the manager's runnables.
	s.Server = mgr.GetWebhookServer()
	for _, h := range s.Hooks {
		s.Server.Register(h.Path, h.Handler)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhook-server", s.Server.StartedChecker()); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("setup", s.ReadyCheck); err != nil {
		return err
	}
	return mgr.Add(s)
}

// rotateOnHangup rotates the self-signed CA and serving certificate each
// time the process receives SIGHUP, until ctx ends.
func (s *Setup) rotateOnHangup(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			klog.FromContext(ctx).Info("SIGHUP: rotating the self-signed CA and serving certificate")
			s.SelfSigned.Rotate()
		}
	}
}
