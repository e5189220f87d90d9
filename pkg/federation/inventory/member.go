package inventory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"

	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/federation/resources"
)

// NodePool is a group of a member's schedulable nodes that have the same
// values of the pool labels.
type NodePool struct {
	// Labels are the pool labels of its nodes (a label the nodes lack is
	// not there).
	Labels map[string]string
	// Allocatable is its nodes' allocatable, and Allocated the requests
	// of the unfinished pods bound to them.
	Allocatable, Allocated resources.Amounts
}

// Pools is an inventory that knows its members' node pools.
type Pools interface {
	// PoolLabels are the node labels the pools are grouped by.
	PoolLabels() []string
	// NodePools lists the cluster's pools, sorted by their labels; ok is
	// false when they are not known (the member is not followed, not
	// listed yet, or not reachable).
	NodePools(cluster string) (pools []NodePool, ok bool)
	// Listing names the members whose nodes are being listed for the
	// first time: their pools are about to be known.
	Listing() []string
}

// DefaultPoolLabels are the node labels that name an accelerator model:
// NVIDIA GPU feature discovery's product and GKE's accelerator.
var DefaultPoolLabels = []string{"nvidia.com/gpu.product", "cloud.google.com/gke-accelerator"}

// member follows one workload cluster's nodes and pods.
type member struct {
	// desc names the member in messages, "Cluster API cluster ns/name".
	desc       string
	poolLabels []string
	cancel     context.CancelFunc

	mu       sync.Mutex
	err      string
	synced   bool
	probeErr string
	nodes    map[string]nodeUse
	pods     map[types.UID]podUse
	// onNode are the requests of the pods bound to each node.
	onNode map[string]map[corev1.ResourceName]int64
	total  struct{ allocatable, allocated, allocating map[corev1.ResourceName]int64 }
}

// nodeUse is what a schedulable node counts for.
type nodeUse struct {
	allocatable corev1.ResourceList
	labels      map[string]string
}

// podUse is what a pod counts for.
type podUse struct {
	requests corev1.ResourceList
	node     string
}

func newMember(desc string, poolLabels []string, cancel context.CancelFunc) *member {
	m := &member{desc: desc, poolLabels: poolLabels, cancel: cancel, nodes: map[string]nodeUse{}, pods: map[types.UID]podUse{},
		onNode: map[string]map[corev1.ResourceName]int64{}}
	m.total.allocatable, m.total.allocated, m.total.allocating = map[corev1.ResourceName]int64{}, map[corev1.ResourceName]int64{}, map[corev1.ResourceName]int64{}
	return m
}

// follow starts watching a member reached with cfg, telling changed of
// every change.
func follow(ctx context.Context, desc string, cfg *rest.Config, poolLabels []string, probeInterval time.Duration, changed func()) *member {
	ctx, cancel := context.WithCancel(ctx)
	m := newMember(desc, poolLabels, cancel)
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 20, 40
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		m.err = fmt.Sprintf("no client for %s: %v", desc, err)
		return m
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(slim(poolLabels)))
	for _, inf := range []toolscache.SharedIndexInformer{f.Core().V1().Nodes().Informer(), f.Core().V1().Pods().Informer()} {
		_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *toolscache.Reflector, err error) {
			m.mu.Lock()
			m.err = fmt.Sprintf("watching %s: %v", desc, err)
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
	go m.probe(ctx, cs, probeInterval, changed)
	return m
}

// unusable is a member that cannot be followed, and why.
func unusable(desc, why string) *member {
	m := newMember(desc, nil, func() {})
	m.err = why
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
			m.probeErr = fmt.Sprintf("the API server of %s is not ready: %v", m.desc, err)
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
		return fmt.Sprintf("the nodes and pods of %s are not listed yet", m.desc)
	}
	return ""
}

// listing says whether the member is reachable and its first listing not
// done yet.
func (m *member) listing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.synced && m.err == "" && m.probeErr == ""
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
		addTo(m.total.allocatable, m.nodes[o.Name].allocatable, -1)
		delete(m.nodes, o.Name)
		if !gone && schedulable(o) {
			m.nodes[o.Name] = nodeUse{allocatable: o.Status.Allocatable, labels: o.Labels}
			addTo(m.total.allocatable, o.Status.Allocatable, 1)
		}
	case *corev1.Pod:
		if old, ok := m.pods[o.UID]; ok {
			m.count(old, -1)
			delete(m.pods, o.UID)
		}
		if gone || o.Status.Phase == corev1.PodSucceeded || o.Status.Phase == corev1.PodFailed {
			return
		}
		use := podUse{requests: resourcehelper.PodRequests(o, resourcehelper.PodResourcesOptions{}), node: o.Spec.NodeName}
		m.pods[o.UID] = use
		m.count(use, 1)
	}
}

// count adds (sign 1) or removes (-1) a pod's requests.
func (m *member) count(use podUse, sign int64) {
	if use.node == "" {
		addTo(m.total.allocating, use.requests, sign)
		return
	}
	addTo(m.total.allocated, use.requests, sign)
	on := m.onNode[use.node]
	if on == nil {
		on = map[corev1.ResourceName]int64{}
		m.onNode[use.node] = on
	}
	addTo(on, use.requests, sign)
	if len(on) == 0 {
		delete(m.onNode, use.node)
	}
}

// summary is the member's resource summary now.
func (m *member) summary() *clusterv1alpha1.ResourceSummary {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &clusterv1alpha1.ResourceSummary{
		Allocatable: list(m.total.allocatable), Allocated: list(m.total.allocated), Allocating: list(m.total.allocating),
	}
}

// nodePools groups the schedulable nodes by their pool labels; ok is false
// while the member cannot be counted on.
func (m *member) nodePools() ([]NodePool, bool) {
	if m.unreachable() != "" {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	byKey := map[string]*NodePool{}
	for name, n := range m.nodes {
		key := poolKey(n.labels)
		p := byKey[key]
		if p == nil {
			p = &NodePool{Labels: n.labels, Allocatable: resources.Amounts{}, Allocated: resources.Amounts{}}
			if p.Labels == nil {
				p.Labels = map[string]string{}
			}
			byKey[key] = p
		}
		for r, q := range n.allocatable {
			p.Allocatable[r] += q.MilliValue()
		}
		for r, v := range m.onNode[name] {
			p.Allocated[r] += v
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]NodePool, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out, true
}

// poolKey is labels as sorted k=v pairs.
func poolKey(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
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

// slim keeps of a node or pod only what the summary and the pools read:
// of a node's labels, the pool labels.
func slim(poolLabels []string) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		switch o := obj.(type) {
		case *corev1.Node:
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion}}
			for _, k := range poolLabels {
				if v, ok := o.Labels[k]; ok {
					if n.Labels == nil {
						n.Labels = map[string]string{}
					}
					n.Labels[k] = v
				}
			}
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
}
