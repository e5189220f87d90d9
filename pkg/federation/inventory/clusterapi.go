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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	resourcehelper "k8s.io/component-helpers/resource"
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

	mu      sync.Mutex
	ctx     context.Context
	changed func()
	members map[types.NamespacedName]*member
}

// Start implements Inventory.
func (c *ClusterAPI) Start(ctx context.Context, changed func()) error {
	if c.ProbeInterval <= 0 {
		c.ProbeInterval = 10 * time.Second
	}
	c.mu.Lock()
	c.ctx, c.changed, c.members = ctx, changed, map[types.NamespacedName]*member{}
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
		c.members[key] = c.follow(key, kubeconfig)
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
		if m != nil {
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
func readiness(cl *clusterv1beta2.Cluster, k *clusterv1alpha1.Cluster, m *member) (reason, message string) {
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

// member follows one workload cluster's nodes and pods.
type member struct {
	key        types.NamespacedName
	kubeconfig []byte
	cancel     context.CancelFunc

	mu       sync.Mutex
	err      string
	synced   bool
	probeErr string
	nodes    map[string]corev1.ResourceList
	pods     map[types.UID]podUse
	total    struct{ allocatable, allocated, allocating map[corev1.ResourceName]int64 }
}

// podUse is what a pod counts for.
type podUse struct {
	requests corev1.ResourceList
	bound    bool
}

// follow starts watching the member; without a usable kubeconfig, it
// records why.
func (c *ClusterAPI) follow(key types.NamespacedName, kubeconfig []byte) *member {
	ctx, cancel := context.WithCancel(c.ctx)
	m := &member{key: key, kubeconfig: kubeconfig, cancel: cancel, nodes: map[string]corev1.ResourceList{}, pods: map[types.UID]podUse{}}
	m.total.allocatable, m.total.allocated, m.total.allocating = map[corev1.ResourceName]int64{}, map[corev1.ResourceName]int64{}, map[corev1.ResourceName]int64{}
	if len(kubeconfig) == 0 {
		return m
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		m.err = fmt.Sprintf("the kubeconfig of Cluster API cluster %s does not load: %v", key, err)
		return m
	}
	cfg.QPS, cfg.Burst = 20, 40
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		m.err = fmt.Sprintf("no client for Cluster API cluster %s: %v", key, err)
		return m
	}
	changed := c.changed
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(slim))
	for _, inf := range []toolscache.SharedIndexInformer{f.Core().V1().Nodes().Informer(), f.Core().V1().Pods().Informer()} {
		_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *toolscache.Reflector, err error) {
			m.mu.Lock()
			m.err = fmt.Sprintf("watching Cluster API cluster %s: %v", key, err)
			m.mu.Unlock()
			changed()
		})
		_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { m.observe(obj, false); changed() },
			UpdateFunc: func(_, obj any) { m.observe(obj, false); changed() },
			DeleteFunc: func(obj any) { m.observe(obj, true); changed() },
		})
	}
	f.Start(ctx.Done())
	go func() {
		for _, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return
			}
		}
		m.mu.Lock()
		m.synced = true
		m.mu.Unlock()
		changed()
	}()
	go m.probe(ctx, cs, c.ProbeInterval, changed)
	return m
}

func (m *member) stop() { m.cancel() }

// probe asks the member's API server whether it is ready, every interval;
// a success also clears a watch error (the watches resume by themselves).
func (m *member) probe(ctx context.Context, cs kubernetes.Interface, interval time.Duration, changed func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, min(interval, 5*time.Second))
		err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(pctx).Error()
		cancel()
		if ctx.Err() != nil {
			return
		}
		m.mu.Lock()
		before := m.probeErr
		m.probeErr = ""
		if err != nil {
			m.probeErr = fmt.Sprintf("the API server of Cluster API cluster %s is not ready: %v", m.key, err)
		} else {
			m.err = ""
		}
		now := m.probeErr
		m.mu.Unlock()
		if before != now {
			changed()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// unreachable says why the member cannot be counted on, "" when it can.
func (m *member) unreachable() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.probeErr != "":
		return m.probeErr
	case m.err != "":
		return m.err
	case !m.synced:
		return fmt.Sprintf("the nodes and pods of Cluster API cluster %s are not listed yet", m.key)
	}
	return ""
}

// observe counts a node or pod change.
func (m *member) observe(obj any, gone bool) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj, gone = tomb.Obj, true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch o := obj.(type) {
	case *corev1.Node:
		addTo(m.total.allocatable, m.nodes[o.Name], -1)
		delete(m.nodes, o.Name)
		if !gone && schedulable(o) {
			m.nodes[o.Name] = o.Status.Allocatable
			addTo(m.total.allocatable, o.Status.Allocatable, 1)
		}
	case *corev1.Pod:
		if old, ok := m.pods[o.UID]; ok {
			addTo(m.usedBy(old.bound), old.requests, -1)
			delete(m.pods, o.UID)
		}
		if gone || o.Status.Phase == corev1.PodSucceeded || o.Status.Phase == corev1.PodFailed {
			return
		}
		use := podUse{requests: resourcehelper.PodRequests(o, resourcehelper.PodResourcesOptions{}), bound: o.Spec.NodeName != ""}
		m.pods[o.UID] = use
		addTo(m.usedBy(use.bound), use.requests, 1)
	}
}

func (m *member) usedBy(bound bool) map[corev1.ResourceName]int64 {
	if bound {
		return m.total.allocated
	}
	return m.total.allocating
}

// summary is the member's resource summary now.
func (m *member) summary() *clusterv1alpha1.ResourceSummary {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &clusterv1alpha1.ResourceSummary{
		Allocatable: list(m.total.allocatable), Allocated: list(m.total.allocated), Allocating: list(m.total.allocating),
	}
}

func schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func addTo(to map[corev1.ResourceName]int64, rl corev1.ResourceList, sign int64) {
	for name, q := range rl {
		to[name] += sign * q.MilliValue()
		if to[name] == 0 {
			delete(to, name)
		}
	}
}

func list(m map[corev1.ResourceName]int64) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, v := range m {
		out[name] = *resource.NewMilliQuantity(v, resource.DecimalSI)
	}
	return out
}

// slim keeps of a node or pod only what the summary reads.
func slim(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Node:
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion}}
		n.Spec.Unschedulable = o.Spec.Unschedulable
		n.Status.Allocatable = o.Status.Allocatable
		for _, c := range o.Status.Conditions {
			if c.Type == corev1.NodeReady {
				n.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
			}
		}
		return n, nil
	case *corev1.Pod:
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion}}
		p.Spec.NodeName, p.Spec.Overhead, p.Spec.Resources = o.Spec.NodeName, o.Spec.Overhead, o.Spec.Resources
		for _, c := range o.Spec.Containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c.Name, Resources: c.Resources})
		}
		for _, c := range o.Spec.InitContainers {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy})
		}
		p.Status.Phase = o.Status.Phase
		return p, nil
	}
	return obj, nil
}
