// Package inventory lists the member clusters the dispatcher may send work
// to, each as a Karmada Cluster: its name and what placements match
// (labels, provider, region, zones, taints), its Ready condition, and its
// resource summary (allocatable, allocated, allocating).
//
// Two sources: Karmada's own Cluster objects (the default), and Cluster
// API, where a management cluster's cluster.x-k8s.io Clusters and their
// kubeconfig Secrets describe the members and the inventory measures each
// member's capacity from its nodes and pods itself.
package inventory

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
)

// Inventory is a source of member clusters.
type Inventory interface {
	// Start follows the clusters until ctx ends, calling changed after
	// each change; it returns once the first listing is complete.
	Start(ctx context.Context, changed func()) error
	// Clusters lists the clusters now. The objects are read, never
	// changed.
	Clusters(ctx context.Context) ([]clusterv1alpha1.Cluster, error)
}

// Karmada lists Karmada's Cluster objects from a cache of the Karmada API
// server: Karmada's cluster status controller keeps their summaries.
type Karmada struct {
	Cache  cache.Cache
	Reader client.Reader
	// Members, when set, follows the Push-mode members' nodes for their
	// node pools.
	Members *Members
}

// Start implements Inventory.
func (k *Karmada) Start(ctx context.Context, changed func()) error {
	if k.Members == nil {
		return onChange(ctx, k.Cache, &clusterv1alpha1.Cluster{}, changed)
	}
	if err := k.Members.Start(ctx, changed); err != nil {
		return err
	}
	return onChange(ctx, k.Cache, &clusterv1alpha1.Cluster{}, func() {
		if err := k.Members.Sync(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Following the members' nodes failed; retrying on the next change")
		}
		changed()
	})
}

// PoolLabels implements Pools.
func (k *Karmada) PoolLabels() []string {
	if k.Members == nil {
		return nil
	}
	return k.Members.PoolLabels()
}

// Listing implements Pools.
func (k *Karmada) Listing() []string {
	if k.Members == nil {
		return nil
	}
	return k.Members.Listing()
}

// NodePools implements Pools.
func (k *Karmada) NodePools(cluster string) ([]NodePool, bool) {
	if k.Members == nil {
		return nil, false
	}
	return k.Members.NodePools(cluster)
}

// Clusters implements Inventory.
func (k *Karmada) Clusters(ctx context.Context) ([]clusterv1alpha1.Cluster, error) {
	var l clusterv1alpha1.ClusterList
	if err := k.Reader.List(ctx, &l, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing Karmada clusters: %w", err)
	}
	return l.Items, nil
}

// onChange calls changed on every event of obj's kind in the cache.
func onChange(ctx context.Context, ca cache.Cache, obj client.Object, changed func()) error {
	inf, err := ca.GetInformer(ctx, obj)
	if err != nil {
		return fmt.Errorf("watching %T: %w", obj, err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed() },
		UpdateFunc: func(any, any) { changed() },
		DeleteFunc: func(any) { changed() },
	})
	return err
}
