// Package registration writes the MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration that make the API server call Caldera's
// webhooks, and keeps their CA bundle current.
package registration

import (
	"bytes"
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/pkg/webhooks"
)

// ManagedByLabel marks the configurations this package writes.
const ManagedByLabel = "app.kubernetes.io/managed-by"

// Target says how the API server reaches the webhook server.
type Target struct {
	// URLBase, when set, is the server's base URL (https://127.0.0.1:8443 for
	// a local process); each webhook's path is appended to it.
	URLBase string
	// Service is the webhook's Service when URLBase is empty.
	ServiceName      string
	ServiceNamespace string
	ServicePort      int32
}

func (t Target) clientConfig(path string, caBundle []byte) admissionregistrationv1.WebhookClientConfig {
	cc := admissionregistrationv1.WebhookClientConfig{CABundle: caBundle}
	if t.URLBase != "" {
		cc.URL = ptr.To(t.URLBase + path)
		return cc
	}
	cc.Service = &admissionregistrationv1.ServiceReference{
		Name:      t.ServiceName,
		Namespace: t.ServiceNamespace,
		Path:      ptr.To(path),
	}
	if t.ServicePort != 0 {
		cc.Service.Port = ptr.To(t.ServicePort)
	}
	return cc
}

// Configurations builds the two webhook configurations named name. An empty
// caBundle leaves the API server to trust the serving certificate by its own
// roots, or a CA injector to fill the bundle in.
func Configurations(name string, hooks []webhooks.Webhook, t Target, caBundle []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{ManagedByLabel: "caldera-webhook"}}
	m := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: meta}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: *meta.DeepCopy()}
	excluded := []string{metav1.NamespaceSystem}
	if t.ServiceNamespace != "" && t.ServiceNamespace != metav1.NamespaceSystem {
		excluded = append(excluded, t.ServiceNamespace)
	}
	for _, h := range hooks {
		var nsSelector *metav1.LabelSelector
		if h.ExcludeSystemNamespaces {
			nsSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key:      corev1.LabelMetadataName,
				Operator: metav1.LabelSelectorOpNotIn,
				Values:   excluded,
			}}}
		}
		cc := t.clientConfig(h.Path, caBundle)
		if h.Mutating {
			m.Webhooks = append(m.Webhooks, admissionregistrationv1.MutatingWebhook{
				Name:                    h.Name,
				ClientConfig:            cc,
				Rules:                   h.Rules,
				FailurePolicy:           ptr.To(h.FailurePolicy),
				MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
				NamespaceSelector:       nsSelector,
				SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
				TimeoutSeconds:          ptr.To(h.TimeoutSeconds),
				AdmissionReviewVersions: []string{"v1"},
				ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
				MatchConditions:         h.MatchConditions,
			})
			continue
		}
		v.Webhooks = append(v.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name:                    h.Name,
			ClientConfig:            cc,
			Rules:                   h.Rules,
			FailurePolicy:           ptr.To(h.FailurePolicy),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector:       nsSelector,
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To(h.TimeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
			MatchConditions:         h.MatchConditions,
		})
	}
	return m, v
}

// Apply creates the configurations, or replaces the webhooks of existing
// ones. A webhook written without a CA bundle keeps the bundle the existing
// configuration has for it (written, for example, by cert-manager's CA
// injector).
func Apply(ctx context.Context, c client.Client, m *admissionregistrationv1.MutatingWebhookConfiguration, v *admissionregistrationv1.ValidatingWebhookConfiguration) error {
	var curM admissionregistrationv1.MutatingWebhookConfiguration
	if err := upsert(ctx, c, m, &curM, func() {
		old := curM.Webhooks
		curM.Webhooks = m.DeepCopy().Webhooks
		keepCABundles(old, curM.Webhooks, func(w *admissionregistrationv1.MutatingWebhook) (string, *admissionregistrationv1.WebhookClientConfig) {
			return w.Name, &w.ClientConfig
		})
	}); err != nil {
		return fmt.Errorf("writing MutatingWebhookConfiguration %s: %w", m.Name, err)
	}
	var curV admissionregistrationv1.ValidatingWebhookConfiguration
	if err := upsert(ctx, c, v, &curV, func() {
		old := curV.Webhooks
		curV.Webhooks = v.DeepCopy().Webhooks
		keepCABundles(old, curV.Webhooks, func(w *admissionregistrationv1.ValidatingWebhook) (string, *admissionregistrationv1.WebhookClientConfig) {
			return w.Name, &w.ClientConfig
		})
	}); err != nil {
		return fmt.Errorf("writing ValidatingWebhookConfiguration %s: %w", v.Name, err)
	}
	return nil
}

// upsert creates want, or reads it into cur, merges want's labels, lets
// update change cur, and writes it back, retrying on conflicts.
func upsert(ctx context.Context, c client.Client, want, cur client.Object, update func()) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := c.Get(ctx, client.ObjectKeyFromObject(want), cur)
		if apierrors.IsNotFound(err) {
			return c.Create(ctx, want.DeepCopyObject().(client.Object))
		}
		if err != nil {
			return err
		}
		cur.SetLabels(mergeLabels(cur.GetLabels(), want.GetLabels()))
		update()
		return c.Update(ctx, cur)
	})
}

// keepCABundles gives each new webhook without a CA bundle the bundle the
// old webhook of the same name had.
func keepCABundles[W any](old, new []W, config func(*W) (string, *admissionregistrationv1.WebhookClientConfig)) {
	bundles := map[string][]byte{}
	for i := range old {
		name, cc := config(&old[i])
		bundles[name] = cc.CABundle
	}
	for i := range new {
		name, cc := config(&new[i])
		if len(cc.CABundle) == 0 {
			cc.CABundle = bundles[name]
		}
	}
}

// InjectCABundle writes caBundle into every webhook of the Mutating- and
// ValidatingWebhookConfiguration named name, for configurations installed by
// other means than Apply. A configuration that does not exist is skipped; it
// is an error when neither exists.
func InjectCABundle(ctx context.Context, c client.Client, name string, caBundle []byte) error {
	mutating, err := injectCABundle(ctx, c, name, caBundle, func(m *admissionregistrationv1.MutatingWebhookConfiguration) []*admissionregistrationv1.WebhookClientConfig {
		out := make([]*admissionregistrationv1.WebhookClientConfig, len(m.Webhooks))
		for i := range m.Webhooks {
			out[i] = &m.Webhooks[i].ClientConfig
		}
		return out
	})
	if err != nil {
		return fmt.Errorf("writing the CA bundle into MutatingWebhookConfiguration %s: %w", name, err)
	}
	validating, err := injectCABundle(ctx, c, name, caBundle, func(v *admissionregistrationv1.ValidatingWebhookConfiguration) []*admissionregistrationv1.WebhookClientConfig {
		out := make([]*admissionregistrationv1.WebhookClientConfig, len(v.Webhooks))
		for i := range v.Webhooks {
			out[i] = &v.Webhooks[i].ClientConfig
		}
		return out
	})
	if err != nil {
		return fmt.Errorf("writing the CA bundle into ValidatingWebhookConfiguration %s: %w", name, err)
	}
	if !mutating && !validating {
		return fmt.Errorf("no Mutating- or ValidatingWebhookConfiguration %s to write the CA bundle into", name)
	}
	return nil
}

// injectCABundle writes caBundle into each client configuration configs
// returns of the webhook configuration named name, retrying on conflicts;
// found is false when there is no such configuration.
func injectCABundle[T any, PT interface {
	*T
	client.Object
}](ctx context.Context, c client.Client, name string, caBundle []byte, configs func(PT) []*admissionregistrationv1.WebhookClientConfig) (found bool, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := PT(new(T))
		err := c.Get(ctx, client.ObjectKey{Name: name}, cur)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		changed := false
		for _, cc := range configs(cur) {
			if !bytes.Equal(cc.CABundle, caBundle) {
				cc.CABundle = caBundle
				changed = true
			}
		}
		if !changed {
			return nil
		}
		return c.Update(ctx, cur)
	})
	return found, err
}

func mergeLabels(cur, want map[string]string) map[string]string {
	if cur == nil {
		cur = map[string]string{}
	}
	for k, v := range want {
		cur[k] = v
	}
	return cur
}
