package inventory

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/pkg/federation/clusterapi"
	clusterv1beta2 "github.com/caldera-sh/caldera/pkg/federation/clusterapi/v1beta2"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
)

// ClusterNameLabel is the label Cluster API puts on a cluster's Secrets,
// naming the cluster: the management cache needs only Secrets with it.
const ClusterNameLabel = "cluster.x-k8s.io/cluster-name"

// Reasons of a Cluster API member's Ready condition.
const (
	ReasonReady          = "ClusterAPIMemberReady"
	ReasonNotProvisioned = "NotProvisioned"
	ReasonUnavailable    = "Unavailable"
	ReasonNoKubeconfig   = "NoKubeconfig"
	ReasonUnreachable    = "Unreachable"
	ReasonNotJoined      = "NotJoinedToKarmada"
	ReasonDuplicateName  = "DuplicateName"
)

// ClusterAPI lists the clusters of a Cluster API management cluster. A
// cluster is named by its Cluster object's name, which is the name it is
// joined to Karmada under. The inventory reaches each cluster with the
// kubeconfig Cluster API keeps for it, watches its nodes and pods, and
// sums them: allocatable of the Ready, schedulable nodes; allocated, the
// requests of pods bound to a node and not finished; allocating, those of
// pods not bound yet. A cluster is Ready when Cluster API reports it
// Provisioned with its control plane initialized (and not unavailable),
// its API server answers and its nodes and pods are listed, and Karmada
// has a Cluster of that name that is not NotReady; its labels, provider,
// region, zones and taints, which placements match, are that Karmada
// Cluster's.
type ClusterAPI struct {
	// Management reads Cluster API's Clusters and their kubeconfig
	// Secrets (labelled ClusterNameLabel) from the management cluster.
	Management       cache.Cache
	ManagementReader client.Reader
	// Karmada reads Karmada's Clusters.
	Karmada       cache.Cache
	KarmadaReader client.Reader
	// Namespace limits the Cluster API Clusters read; "" reads all.
	Namespace string
	// ProbeInterval is how often each member's API server is probed.
	ProbeInterval time.Duration
	// Labels are the node labels the members' node pools are grouped
	// by; nil means DefaultPoolLabels.
	Labels []string

	mu      sync.Mutex
	ctx     context.Context
	changed func()
	members map[types.NamespacedName]*capiMember
}

// capiMember is a followed cluster and the kubeconfig it is followed with.
type capiMember struct {
	*member
	kubeconfig []byte
}

// Start implements Inventory.
func (c *ClusterAPI) Start(ctx context.Context, changed func()) error {
	if c.ProbeInterval <= 0 {
		c.ProbeInterval = 10 * time.Second
	}
	c.mu.Lock()
	c.ctx, c.changed, c.members = ctx, changed, map[types.NamespacedName]*capiMember{}
	if c.Labels == nil {
		c.Labels = DefaultPoolLabels
	}
	c.mu.Unlock()
	if err := onChange(ctx, c.Karmada, &clusterv1alpha1.Cluster{}, changed); err != nil {
		return err
	}
	resync := func() {
		if err := c.sync(); err != nil {
			klog.FromContext(ctx).Error(err, "Following Cluster API clusters failed; retrying on the next change")
		}
		changed()
	}
	for _, obj := range []client.Object{&clusterv1beta2.Cluster{}, &corev1.Secret{}} {
		if err := onChange(ctx, c.Management, obj, resync); err != nil {
			return err
		}
	}
	if !c.Management.WaitForCacheSync(ctx) {
		return fmt.Errorf("the management cluster's cache did not sync")
	}
	go func() {
		<-ctx.Done()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, m := range c.members {
			m.stop()
		}
	}()
	return c.sync()
}

// sync starts following each Cluster API cluster with a kubeconfig, again
// when its kubeconfig changes, and stops following those gone.
func (c *ClusterAPI) sync() error {
	var l clusterv1beta2.ClusterList
	if err := c.ManagementReader.List(c.ctx, &l, client.InNamespace(c.Namespace)); err != nil {
		return fmt.Errorf("listing Cluster API clusters: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[types.NamespacedName]bool{}
	for i := range l.Items {
		cl := &l.Items[i]
		key := types.NamespacedName{Namespace: cl.Namespace, Name: cl.Name}
		seen[key] = true
		var secret corev1.Secret
		var kubeconfig []byte
		err := c.ManagementReader.Get(c.ctx, types.NamespacedName{Namespace: cl.Namespace, Name: clusterapi.KubeconfigSecretName(cl.Name)}, &secret)
		switch {
		case err == nil:
			kubeconfig = secret.Data[clusterapi.KubeconfigSecretKey]
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("reading the kubeconfig of Cluster API cluster %s: %w", key, err)
		}
		m := c.members[key]
		if m != nil && bytes.Equal(m.kubeconfig, kubeconfig) {
			continue
		}
		if m != nil {
			m.stop()
		}
		c.members[key] = &capiMember{member: c.follow(key, kubeconfig), kubeconfig: kubeconfig}
	}
	for key, m := range c.members {
		if !seen[key] {
			m.stop()
			delete(c.members, key)
		}
	}
	return nil
}

// Clusters implements Inventory.
func (c *ClusterAPI) Clusters(ctx context.Context) ([]clusterv1alpha1.Cluster, error) {
	var capi clusterv1beta2.ClusterList
	if err := c.ManagementReader.List(ctx, &capi, client.InNamespace(c.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing Cluster API clusters: %w", err)
	}
	var joined clusterv1alpha1.ClusterList
	if err := c.KarmadaReader.List(ctx, &joined, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing Karmada clusters: %w", err)
	}
	karmadaByName := map[string]*clusterv1alpha1.Cluster{}
	for i := range joined.Items {
		karmadaByName[joined.Items[i].Name] = &joined.Items[i]
	}
	items := slices.Clone(capi.Items)
	slices.SortFunc(items, func(a, b clusterv1beta2.Cluster) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []clusterv1alpha1.Cluster
	named := map[string]string{}
	for i := range items {
		cl := &items[i]
		key := types.NamespacedName{Namespace: cl.Namespace, Name: cl.Name}
		if first, dup := named[cl.Name]; dup {
			// The first (by namespace) keeps the name; this one is listed
			// under its namespaced name, never Ready.
			out = append(out, notReady(key.String(), ReasonDuplicateName, fmt.Sprintf("Cluster API cluster %s has the name of %s", key, first)))
			continue
		}
		named[cl.Name] = key.String()
		kc := clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cl.Name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
		k := karmadaByName[cl.Name]
		if k != nil {
			kc.Labels, kc.Spec = k.Labels, k.Spec
		}
		m := c.members[key]
		if m != nil && m.member != nil {
			kc.Status.ResourceSummary = m.summary()
		}
		reason, message := readiness(cl, k, m)
		status := metav1.ConditionFalse
		if reason == ReasonReady {
			status = metav1.ConditionTrue
		}
		kc.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status, Reason: reason, Message: message}}
		out = append(out, kc)
	}
	return out, nil
}

// readiness is why the cluster can or cannot take work.
func readiness(cl *clusterv1beta2.Cluster, k *clusterv1alpha1.Cluster, m *capiMember) (reason, message string) {
	key := cl.Namespace + "/" + cl.Name
	init := cl.Status.Initialization.ControlPlaneInitialized
	switch {
	case cl.DeletionTimestamp != nil || cl.Status.Phase != clusterv1beta2.ClusterPhaseProvisioned || init == nil || !*init:
		phase := cl.Status.Phase
		if cl.DeletionTimestamp != nil {
			phase = clusterv1beta2.ClusterPhaseDeleting
		}
		return ReasonNotProvisioned, fmt.Sprintf("Cluster API cluster %s is %s, control plane initialized %v", key, orUnknown(string(phase)), init != nil && *init)
	}
	for _, cond := range cl.Status.Conditions {
		if cond.Type == clusterv1beta2.ClusterAvailableCondition && cond.Status == metav1.ConditionFalse {
			return ReasonUnavailable, fmt.Sprintf("Cluster API reports %s not available: %s", key, cond.Message)
		}
	}
	if m == nil || len(m.kubeconfig) == 0 {
		return ReasonNoKubeconfig, fmt.Sprintf("no kubeconfig in Secret %s/%s key %q", cl.Namespace, clusterapi.KubeconfigSecretName(cl.Name), clusterapi.KubeconfigSecretKey)
	}
	if msg := m.unreachable(); msg != "" {
		return ReasonUnreachable, msg
	}
	if k == nil {
		return ReasonNotJoined, fmt.Sprintf("Karmada has no cluster %q: join it to place work there", cl.Name)
	}
	for _, cond := range k.Status.Conditions {
		if cond.Type == clusterv1alpha1.ClusterConditionReady && cond.Status == metav1.ConditionFalse {
			return ReasonNotJoined, fmt.Sprintf("Karmada reports cluster %q NotReady: %s", cl.Name, cond.Message)
		}
	}
	return ReasonReady, "provisioned, reachable and joined"
}

func orUnknown(s string) string {
	if s == "" {
		return string(clusterv1beta2.ClusterPhaseUnknown)
	}
	return s
}

func notReady(name, reason, message string) clusterv1alpha1.Cluster {
	return clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{
			Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: message,
		}}},
	}
}

// follow starts watching the cluster; without a usable kubeconfig, it
// records why.
func (c *ClusterAPI) follow(key types.NamespacedName, kubeconfig []byte) *member {
	desc := "Cluster API cluster " + key.String()
	if len(kubeconfig) == 0 {
		return unusable(desc, "no kubeconfig")
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return unusable(desc, fmt.Sprintf("the kubeconfig of %s does not load: %v", desc, err))
	}
	return follow(c.ctx, desc, cfg, c.Labels, c.ProbeInterval, c.changed)
}

// PoolLabels implements Pools.
func (c *ClusterAPI) PoolLabels() []string { return c.Labels }

// NodePools implements Pools: the pools of the Cluster API cluster of that
// name (the first by namespace, as Clusters lists it).
func (c *ClusterAPI) NodePools(cluster string) ([]NodePool, bool) {
	c.mu.Lock()
	var found *capiMember
	var foundKey types.NamespacedName
	for key, m := range c.members {
		if key.Name == cluster && (found == nil || key.Namespace < foundKey.Namespace) {
			found, foundKey = m, key
		}
	}
	c.mu.Unlock()
	if found == nil {
		return nil, false
	}
	return found.nodePools()
}

// Listing implements Pools.
func (c *ClusterAPI) Listing() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for key, m := range c.members {
		if m.listing() {
			out = append(out, key.Name)
		}
	}
	slices.Sort(out)
	return out
}
