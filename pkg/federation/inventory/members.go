package inventory

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
)

// Secret keys of a Karmada member's credentials.
const (
	SecretTokenKey    = "token"
	SecretCABundleKey = "caBundle"
)

// Members follows the nodes and pods of Karmada's Push-mode members to know
// their node pools, reaching each as Karmada's own controllers do: at its
// Cluster's spec.apiEndpoint, with the bearer token and CA bundle of the
// Secret its spec.secretRef names. A Pull-mode member, or one without an
// endpoint or Secret, has no known pools. The token needs to list and
// watch nodes and pods.
type Members struct {
	// Karmada lists Karmada's Clusters; Secrets reads their Secrets.
	Karmada client.Reader
	Secrets client.Reader
	// Labels are the node labels pools are grouped by; nil means
	// DefaultPoolLabels.
	Labels []string
	// ProbeInterval is how often each member's API server is probed.
	ProbeInterval time.Duration

	mu      sync.Mutex
	ctx     context.Context
	changed func()
	members map[string]*pushMember
}

// pushMember is a followed member and what it is followed with.
type pushMember struct {
	*member
	endpoint   string
	secret     clusterv1alpha1.LocalSecretReference
	insecure   bool
	proxy      string
	secretData string
	readAt     time.Time
}

// Start follows the members until ctx ends, calling changed after each
// change of their nodes and pods. The caller calls Sync when Clusters
// change; Start calls it every probe interval too.
func (m *Members) Start(ctx context.Context, changed func()) error {
	if m.Labels == nil {
		m.Labels = DefaultPoolLabels
	}
	if m.ProbeInterval <= 0 {
		m.ProbeInterval = 10 * time.Second
	}
	m.mu.Lock()
	m.ctx, m.changed, m.members = ctx, changed, map[string]*pushMember{}
	m.mu.Unlock()
	go func() {
		// Members that cannot be reached get their Secrets read again
		// though their Clusters do not change.
		t := time.NewTicker(m.ProbeInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				m.mu.Lock()
				defer m.mu.Unlock()
				for _, pm := range m.members {
					pm.stop()
				}
				return
			case <-t.C:
				if err := m.Sync(ctx); err != nil {
					klog.FromContext(ctx).Error(err, "Following the members' nodes failed")
				}
			}
		}
	}()
	return m.Sync(ctx)
}

// Sync follows each Push-mode member with an endpoint and Secret, anew when
// they change, and stops following those gone. The Secret of a member
// that cannot be reached is read again, at most once per probe interval:
// a token that is refused is replaced by the Secret's new one. A Secret
// changed while its old token still works is read when that token stops
// working.
func (m *Members) Sync(ctx context.Context) error {
	var l clusterv1alpha1.ClusterList
	if err := m.Karmada.List(ctx, &l); err != nil {
		return fmt.Errorf("listing Karmada clusters: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.members == nil {
		return nil
	}
	seen := map[string]bool{}
	for i := range l.Items {
		cl := &l.Items[i]
		if cl.Spec.SyncMode != clusterv1alpha1.Push || cl.Spec.APIEndpoint == "" || cl.Spec.SecretRef == nil || cl.DeletionTimestamp != nil {
			continue
		}
		seen[cl.Name] = true
		pm := m.members[cl.Name]
		same := pm != nil && pm.endpoint == cl.Spec.APIEndpoint && pm.secret == *cl.Spec.SecretRef &&
			pm.insecure == cl.Spec.InsecureSkipTLSVerification && pm.proxy == cl.Spec.ProxyURL
		if same && (pm.unreachable() == "" || time.Since(pm.readAt) < m.ProbeInterval) {
			continue
		}
		var secret corev1.Secret
		err := m.Secrets.Get(ctx, client.ObjectKey{Namespace: cl.Spec.SecretRef.Namespace, Name: cl.Spec.SecretRef.Name}, &secret)
		data := string(secret.Data[SecretTokenKey]) + "\x00" + string(secret.Data[SecretCABundleKey])
		if same && err == nil && data == pm.secretData {
			pm.readAt = time.Now()
			continue
		}
		if pm != nil {
			pm.stop()
		}
		next := &pushMember{endpoint: cl.Spec.APIEndpoint, secret: *cl.Spec.SecretRef, insecure: cl.Spec.InsecureSkipTLSVerification,
			proxy: cl.Spec.ProxyURL, secretData: data, readAt: time.Now()}
		desc := fmt.Sprintf("member cluster %s", cl.Name)
		if err != nil {
			next.member = unusable(desc, fmt.Sprintf("reading Secret %s/%s of %s: %v", cl.Spec.SecretRef.Namespace, cl.Spec.SecretRef.Name, desc, err))
		} else if cfg, cerr := memberConfig(cl, &secret); cerr != nil {
			next.member = unusable(desc, fmt.Sprintf("%s: %v", desc, cerr))
		} else {
			next.member = follow(m.ctx, desc, cfg, m.Labels, m.ProbeInterval, m.changed)
		}
		if why := next.member.err; why != "" {
			klog.FromContext(ctx).Info("A member's node pools are not known", "cluster", cl.Name, "reason", why)
		}
		m.members[cl.Name] = next
	}
	for name, pm := range m.members {
		if !seen[name] {
			pm.stop()
			delete(m.members, name)
		}
	}
	return nil
}

// memberConfig is how to reach the member with the Secret's credentials.
func memberConfig(cl *clusterv1alpha1.Cluster, secret *corev1.Secret) (*rest.Config, error) {
	token := string(secret.Data[SecretTokenKey])
	if token == "" {
		return nil, fmt.Errorf("Secret %s/%s has no %q", secret.Namespace, secret.Name, SecretTokenKey)
	}
	cfg := &rest.Config{Host: cl.Spec.APIEndpoint, BearerToken: token, UserAgent: "caldera-global"}
	if cl.Spec.InsecureSkipTLSVerification {
		cfg.Insecure = true
	} else {
		cfg.CAData = secret.Data[SecretCABundleKey]
	}
	if cl.Spec.ProxyURL != "" {
		u, err := url.Parse(cl.Spec.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("spec.proxyURL: %v", err)
		}
		cfg.Proxy = http.ProxyURL(u)
	}
	return cfg, nil
}

// PoolLabels implements Pools.
func (m *Members) PoolLabels() []string { return m.Labels }

// NodePools implements Pools.
func (m *Members) NodePools(cluster string) ([]NodePool, bool) {
	m.mu.Lock()
	pm := m.members[cluster]
	m.mu.Unlock()
	if pm == nil {
		return nil, false
	}
	return pm.nodePools()
}

// Listing implements Pools.
func (m *Members) Listing() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for name, pm := range m.members {
		if pm.listing() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
