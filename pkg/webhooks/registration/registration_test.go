package registration_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/caldera-sh/caldera/pkg/webhooks"
	"github.com/caldera-sh/caldera/pkg/webhooks/registration"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

func hooks() []webhooks.Webhook {
	rule := admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"batch.volcano.sh"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"jobs"}},
	}
	return []webhooks.Webhook{
		{Name: "mutate.jobs.caldera.sh", Path: "/jobs/mutate", Mutating: true, Rules: []admissionregistrationv1.RuleWithOperations{rule},
			FailurePolicy: admissionregistrationv1.Fail, TimeoutSeconds: 10},
		{Name: "validate.pods.caldera.sh", Path: "/pods/validate", Rules: []admissionregistrationv1.RuleWithOperations{rule},
			FailurePolicy: admissionregistrationv1.Ignore, TimeoutSeconds: 5, ExcludeSystemNamespaces: true},
	}
}

func TestConfigurations(t *testing.T) {
	cases := map[string]struct {
		target               registration.Target
		wantMutateClient     admissionregistrationv1.WebhookClientConfig
		wantExcludedSelector []string
	}{
		"local process": {
			target: registration.Target{URLBase: "https://127.0.0.1:8443", ServiceNamespace: "caldera-system"},
			wantMutateClient: admissionregistrationv1.WebhookClientConfig{
				URL: ptr.To("https://127.0.0.1:8443/jobs/mutate"), CABundle: []byte("ca"),
			},
			wantExcludedSelector: []string{"kube-system", "caldera-system"},
		},
		"service": {
			target: registration.Target{ServiceName: "caldera-webhook", ServiceNamespace: "caldera-system"},
			wantMutateClient: admissionregistrationv1.WebhookClientConfig{
				Service:  &admissionregistrationv1.ServiceReference{Name: "caldera-webhook", Namespace: "caldera-system", Path: ptr.To("/jobs/mutate")},
				CABundle: []byte("ca"),
			},
			wantExcludedSelector: []string{"kube-system", "caldera-system"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, v := registration.Configurations("caldera-webhook", hooks(), tc.target, []byte("ca"))
			if len(m.Webhooks) != 1 || len(v.Webhooks) != 1 {
				t.Fatalf("got %d mutating and %d validating webhooks, want 1 and 1", len(m.Webhooks), len(v.Webhooks))
			}
			if diff := cmp.Diff(tc.wantMutateClient, m.Webhooks[0].ClientConfig); diff != "" {
				t.Errorf("clientConfig (-want,+got):\n%s", diff)
			}
			if m.Webhooks[0].NamespaceSelector != nil {
				t.Errorf("a CRD webhook is scoped to namespaces: %v", m.Webhooks[0].NamespaceSelector)
			}
			wantSelector := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: tc.wantExcludedSelector,
			}}}
			if diff := cmp.Diff(wantSelector, v.Webhooks[0].NamespaceSelector); diff != "" {
				t.Errorf("pod webhook namespaceSelector (-want,+got):\n%s", diff)
			}
			if got := *v.Webhooks[0].FailurePolicy; got != admissionregistrationv1.Ignore {
				t.Errorf("pod webhook failurePolicy %s, want Ignore", got)
			}
			if got := *v.Webhooks[0].SideEffects; got != admissionregistrationv1.SideEffectClassNone {
				t.Errorf("sideEffects %s, want None", got)
			}
		})
	}
}

func bundles(t *testing.T, c client.Client, name string) (mutating, validating []string) {
	t.Helper()
	var m admissionregistrationv1.MutatingWebhookConfiguration
	var v admissionregistrationv1.ValidatingWebhookConfiguration
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, &m); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, &v); err != nil {
		t.Fatal(err)
	}
	for _, w := range m.Webhooks {
		mutating = append(mutating, string(w.ClientConfig.CABundle))
	}
	for _, w := range v.Webhooks {
		validating = append(validating, string(w.ClientConfig.CABundle))
	}
	return mutating, validating
}

func TestApplyAndInject(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(wt.Scheme(t)).Build()
	target := registration.Target{URLBase: "https://127.0.0.1:8443"}

	if err := registration.InjectCABundle(t.Context(), c, "caldera-webhook", []byte("ca-0")); err == nil {
		t.Error("InjectCABundle without configurations succeeded")
	}
	m, v := registration.Configurations("caldera-webhook", hooks(), target, []byte("ca-1"))
	if err := registration.Apply(t.Context(), c, m, v); err != nil {
		t.Fatal(err)
	}
	gotM, gotV := bundles(t, c, "caldera-webhook")
	if diff := cmp.Diff([][]string{{"ca-1"}, {"ca-1"}}, [][]string{gotM, gotV}); diff != "" {
		t.Errorf("bundles after create (-want,+got):\n%s", diff)
	}

	// Written without a bundle, the configurations keep the one they have
	// (a CA injector's).
	m, v = registration.Configurations("caldera-webhook", hooks(), target, nil)
	if err := registration.Apply(t.Context(), c, m, v); err != nil {
		t.Fatal(err)
	}
	gotM, gotV = bundles(t, c, "caldera-webhook")
	if diff := cmp.Diff([][]string{{"ca-1"}, {"ca-1"}}, [][]string{gotM, gotV}); diff != "" {
		t.Errorf("bundles after an update without a bundle (-want,+got):\n%s", diff)
	}

	if err := registration.InjectCABundle(t.Context(), c, "caldera-webhook", []byte("ca-2")); err != nil {
		t.Fatal(err)
	}
	gotM, gotV = bundles(t, c, "caldera-webhook")
	if diff := cmp.Diff([][]string{{"ca-2"}, {"ca-2"}}, [][]string{gotM, gotV}); diff != "" {
		t.Errorf("bundles after injection (-want,+got):\n%s", diff)
	}
}
