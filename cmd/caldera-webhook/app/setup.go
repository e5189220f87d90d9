package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/caldera-sh/caldera/cmd/caldera-webhook/app/options"
	"github.com/caldera-sh/caldera/pkg/webhooks"
	"github.com/caldera-sh/caldera/pkg/webhooks/certs"
	"github.com/caldera-sh/caldera/pkg/webhooks/registration"
)

// setup brings the webhook into service once its server listens: it fills
// the cache, writes the webhook configurations (or the CA bundle into
// configurations installed otherwise), reports ready, and then renews the
// self-signed certificates for as long as it runs.
type setup struct {
	o      *options.Options
	server webhook.Server
	cache  cache.Cache
	// client writes the webhook configurations; it does not read from the
	// cache, which does not hold them.
	client client.Client
	hooks  []webhooks.Webhook
	// Exactly one of selfSigned and watcher is set.
	selfSigned *certs.SelfSigned
	watcher    *certwatcher.CertWatcher
	// caBundle is --ca-file's content.
	caBundle []byte
	ready    atomic.Bool
}

var (
	_ manager.Runnable               = &setup{}
	_ manager.LeaderElectionRunnable = &setup{}
)

// NeedLeaderElection is false: every replica serves.
func (s *setup) NeedLeaderElection() bool { return false }

func (s *setup) readyCheck(*http.Request) error {
	if !s.ready.Load() {
		return errors.New("the webhook configurations are not written yet")
	}
	return nil
}

// Start implements manager.Runnable.
func (s *setup) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("setup")
	ctx = klog.NewContext(ctx, logger)
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return s.server.StartedChecker()(nil) == nil, nil
	}); err != nil {
		return fmt.Errorf("waiting for the webhook server: %w", err)
	}
	for _, obj := range cachedObjects() {
		if _, err := s.cache.GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("starting the informer for %T: %w", obj, err)
		}
	}
	if !s.cache.WaitForCacheSync(ctx) {
		return errors.New("the cache did not sync")
	}

	if s.o.Register || s.selfSigned != nil {
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
		logger.Info("Wrote the webhook configurations", "name", s.o.WebhookConfigName, "register", s.o.Register)
	}
	s.ready.Store(true)

	if s.selfSigned == nil {
		<-ctx.Done()
		return nil
	}
	return s.selfSigned.Run(ctx, s.publish)
}

func (s *setup) currentBundle() []byte {
	if s.selfSigned != nil {
		return s.selfSigned.CABundle()
	}
	return s.caBundle
}

// publish writes the webhook configurations with caBundle, or only the
// bundle when the configurations are installed by other means.
func (s *setup) publish(ctx context.Context, caBundle []byte) error {
	if s.o.Register {
		m, v := registration.Configurations(s.o.WebhookConfigName, s.hooks, target(s.o), caBundle)
		return registration.Apply(ctx, s.client, m, v)
	}
	return registration.InjectCABundle(ctx, s.client, s.o.WebhookConfigName, caBundle)
}
