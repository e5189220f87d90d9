package controller

import (
	"github.com/caldera-sh/caldera/pkg/federation/inventory"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/federation/resources"
	"github.com/caldera-sh/caldera/pkg/hyperjob/split"
)

// splitInput is the members as the HyperJob split sees them, with the node
// pools that pools (nil: none) knows and the labels they are grouped by.
// Free is allocatable minus allocated and allocating; with empty, the
// allocatable alone: the members as if nothing ran.
func splitInput(members []clusterv1alpha1.Cluster, pools inventory.Pools, empty bool) (clusters []split.Cluster, poolLabels []string) {
	if pools != nil {
		poolLabels = pools.PoolLabels()
	}
	clusters = make([]split.Cluster, 0, len(members))
	for i := range members {
		m := &members[i]
		c := split.Cluster{Name: m.Name, Free: resources.Amounts{}, Labels: m.Labels}
		if rs := m.Status.ResourceSummary; rs != nil {
			c.Free = resources.Of(rs.Allocatable)
			if !empty {
				c.Free.Sub(resources.Of(rs.Allocated)).Sub(resources.Of(rs.Allocating))
			}
		}
		if pools != nil {
			if nps, ok := pools.NodePools(m.Name); ok {
				c.Pools = make([]split.Pool, 0, len(nps))
				for _, np := range nps {
					free := np.Allocatable.Clone()
					if !empty {
						free.Sub(np.Allocated)
					}
					c.Pools = append(c.Pools, split.Pool{Labels: np.Labels, Free: free})
				}
			}
		}
		clusters = append(clusters, c)
	}
	return clusters, poolLabels
}
