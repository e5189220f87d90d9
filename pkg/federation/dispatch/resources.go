package dispatch

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/federation/resources"
)

// Resources are the amounts a dispatch decision compares.
type Resources = resources.Amounts

// ResourcesOf converts a resource list.
func ResourcesOf(rl corev1.ResourceList) Resources { return resources.Of(rl) }
