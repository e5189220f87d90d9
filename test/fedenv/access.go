package fedenv

import (
	"context"
	"os"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apischeme "github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/pkg/federation/karmada"
)

// ClientFor is a client of the kubeconfig's API server knowing Caldera's
// and the Karmada mirror's kinds.
func ClientFor(kubeconfig string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme, err := apischeme.New()
	if err != nil {
		return nil, err
	}
	if err := karmada.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// MemberAccess is how Karmada reaches a Push-mode member.
type MemberAccess struct {
	Endpoint string
	Token    string
	CA       []byte
}

// GrantAccess makes, in the member, the service account caldera-global
// reaches it as (allowed to list and watch nodes and pods), and returns
// its token and the member's address.
func GrantAccess(ctx context.Context, kubeconfig string) (MemberAccess, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return MemberAccess{}, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return MemberAccess{}, err
	}
	const ns, name = "kube-system", "karmada-member"
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, metav1.CreateOptions{}); err != nil {
		return MemberAccess{}, err
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"list", "watch"}}}}, metav1.CreateOptions{}); err != nil {
		return MemberAccess{}, err
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}, metav1.CreateOptions{}); err != nil {
		return MemberAccess{}, err
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		return MemberAccess{}, err
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return MemberAccess{}, err
		}
	}
	return MemberAccess{Endpoint: cfg.Host, Token: tr.Status.Token, CA: ca}, nil
}
