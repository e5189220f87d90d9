//go:build integration

package federation

import (
	"context"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/pkg/federation/inventory"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestMemberNodePools: the API server plays Karmada and a Push-mode member,
// push-a, whose Cluster names the API server as its endpoint and a Secret
// with a service account's token. Until the account may list nodes and
// pods, push-a's pools are unknown, saying so; once it may, they are its
// nodes grouped by GPU model, a bound pod counted in its node's pool. A
// Pull-mode member is not followed. When push-a's Secret changes to a token
// that is refused, its pools are unknown again.
func TestMemberNodePools(t *testing.T) {
	const ns = "karmada-cluster"
	ctx := t.Context()
	c := fw.Client
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "push-a"}}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "push-a", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "push-a"},
		Data: map[string][]byte{inventory.SecretTokenKey: []byte(tr.Status.Token), inventory.SecretCABundleKey: fw.Cluster.APIServer.CAData}}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]clusterv1alpha1.SyncMode{"push-a": clusterv1alpha1.Push, "pull-a": clusterv1alpha1.Pull} {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{
			SyncMode: mode, APIEndpoint: fw.Cluster.APIServer.URL, SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: ns, Name: "push-a"}}}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), cl) })
	}
	// Nodes of two models; the other tests' nodes have neither.
	for name, model := range map[string]string{"pool-h-0": "PoolTest-H100", "pool-h-1": "PoolTest-H100", "pool-a-0": "PoolTest-A100"} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"nvidia.com/gpu.product": model}}}
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		n.Status.Allocatable = corev1.ResourceList{gpu: resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("64")}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		if err := c.Status().Update(ctx, n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), n) })
	}
	rl := corev1.ResourceList{gpu: resource.MustParse("3")}
	if err := c.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trainer"},
		Spec: corev1.PodSpec{NodeName: "pool-h-1", Containers: []corev1.Container{{Name: "main", Image: "trainer", Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}}}}); err != nil {
		t.Fatal(err)
	}

	rctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
	defer cancel()
	m := &inventory.Members{Karmada: c, Secrets: c, ProbeInterval: 500 * time.Millisecond}
	if err := m.Start(rctx, func() {}); err != nil {
		t.Fatal(err)
	}
	pools := func(cluster string) string {
		if err := m.Sync(ctx); err != nil {
			return err.Error()
		}
		ps, ok := m.NodePools(cluster)
		if !ok {
			return "unknown"
		}
		out := ""
		for _, p := range ps {
			if model := p.Labels["nvidia.com/gpu.product"]; model != "" && model[:8] == "PoolTest" {
				out += fmt.Sprintf("[%s %d/%d]", model, p.Allocatable[gpu]/1000, p.Allocated[gpu]/1000)
			}
		}
		return out
	}
	// Not allowed yet: the watch is refused.
	poll.Eventually(t, t.Context(), 20*time.Second, "push-a's pools unknown without RBAC", func() (bool, string) {
		got := pools("push-a")
		return got == "unknown", got
	})
	if err := c.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "pool-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"list", "watch"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pool-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "pool-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "push-a"}}}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "push-a's pools by model", func() (bool, string) {
		got := pools("push-a")
		return got == "[PoolTest-A100 8/0][PoolTest-H100 16/3]", got
	})
	if got := pools("pull-a"); got != "unknown" {
		t.Errorf("pull-a: %s", got)
	}
	// The account is deleted: its token is refused, the pools are
	// unknown. A new account's token in the Secret brings them back, read
	// without a change of the Cluster.
	if err := c.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "push-a"}}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "push-a's pools unknown with a refused token", func() (bool, string) {
		got := pools("push-a")
		return got == "unknown", got
	})
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "push-a"}}); err != nil {
		t.Fatal(err)
	}
	tr, err = cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "push-a", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret.Data[inventory.SecretTokenKey] = []byte(tr.Status.Token)
	if err := c.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "push-a's pools with the new token", func() (bool, string) {
		ps, ok := m.NodePools("push-a")
		return ok && len(ps) > 0, fmt.Sprint(ok)
	})
}
