package localenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/deploy"
)

// SystemNamespace holds the Caldera components' service accounts, Leases
// and the agents' ConfigMap, as in a cluster installed from deploy/member.
const SystemNamespace = "caldera-system"

// tokenLifetime is how long a component's service account token lasts:
// longer than any local session.
const tokenLifetime = 30 * 24 * 60 * 60

// installIdentities gives every Caldera component the identity it has in a
// cluster installed from deploy/member: its service account in
// caldera-system, bound to the roles of deploy/member/rbac.yaml and
// nothing else.
func installIdentities(ctx context.Context, c client.Client) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: SystemNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", SystemNamespace, err)
	}
	for _, name := range []string{ComponentScheduler, ComponentControllerManager, ComponentWebhook, ComponentAgent} {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: SystemNamespace, Name: name}}
		if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating service account %s: %w", name, err)
		}
	}
	objs, err := DecodeManifests(deploy.MemberRBAC)
	if err != nil {
		return fmt.Errorf("deploy/member/rbac.yaml: %w", err)
	}
	reader, err := DecodeManifests([]byte(metricsReader))
	if err != nil {
		return fmt.Errorf("the metrics reader: %w", err)
	}
	for _, o := range append(objs, reader...) {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// MetricsReader is the service account in SystemNamespace that may read
// the components' metrics (ClusterRole caldera-metrics-reader) and the
// scheduler's explanations: what a cluster's Prometheus would be.
const MetricsReader = "caldera-metrics-reader"

// metricsReader is MetricsReader's service account and bindings.
const metricsReader = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: ` + MetricsReader + `
  namespace: ` + SystemNamespace + `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ` + MetricsReader + `
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: caldera-metrics-reader
subjects:
  - kind: ServiceAccount
    name: ` + MetricsReader + `
    namespace: ` + SystemNamespace + `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: caldera-explanations-reader
rules:
  - nonResourceURLs: [/debug/jobs/, /debug/jobs/*]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: caldera-explanations-reader
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: caldera-explanations-reader
subjects:
  - kind: ServiceAccount
    name: ` + MetricsReader + `
    namespace: ` + SystemNamespace + `
`

// MetricsToken returns a bearer token of MetricsReader, good for an hour,
// for the components' metrics endpoints and ExplainURL.
func (e *Environment) MetricsToken(ctx context.Context) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: SystemNamespace, Name: MetricsReader}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}
	if err := e.cluster.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", fmt.Errorf("requesting a token of service account %s/%s: %w", SystemNamespace, MetricsReader, err)
	}
	return tr.Status.Token, nil
}

// DecodeManifests splits a multi-document YAML file into its objects.
func DecodeManifests(b []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, u)
	}
}

// kubeconfigOf writes, under Dir/identities, a kubeconfig that
// authenticates as the component's service account, and returns its path.
func (e *Environment) kubeconfigOf(ctx context.Context, component string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: SystemNamespace, Name: component}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(tokenLifetime))}}
	if err := e.cluster.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", fmt.Errorf("requesting a token of service account %s/%s: %w", SystemNamespace, component, err)
	}
	dir := filepath.Join(e.Dir, "identities")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, component+".kubeconfig")
	user := "system:serviceaccount:" + SystemNamespace + ":" + component
	if err := e.cluster.APIServer.KubeconfigWithToken(user, tr.Status.Token, path); err != nil {
		return "", err
	}
	return path, nil
}
