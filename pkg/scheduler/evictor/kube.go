package evictor

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/kubernetes"
)

// KubeEvictor posts Evictions to the API server.
type KubeEvictor struct {
	Client kubernetes.Interface
}

// Evict posts the eviction to the pod's eviction subresource.
func (k KubeEvictor) Evict(ctx context.Context, e *policyv1.Eviction) error {
	return k.Client.PolicyV1().Evictions(e.Namespace).Evict(ctx, e)
}
