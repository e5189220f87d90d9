package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/quantity"
)

// ParseResources reads "cpu=4,memory=16Gi,nvidia.com/gpu=8" as the flag
// flag gives it.
func ParseResources(flag, s string) (corev1.ResourceList, error) {
	if s == "" {
		return nil, nil
	}
	out := corev1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--%s %q: %q is not name=quantity", flag, s, kv)
		}
		q, err := quantity.Parse(value)
		if err != nil {
			return nil, fmt.Errorf("--%s %q: %s: %v", flag, s, name, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// Resources prints a resource list as "cpu=4,memory=16Gi", names sorted
// with cpu and memory first; "-" when empty.
func Resources(rl corev1.ResourceList) string {
	if len(rl) == 0 {
		return "-"
	}
	names := make([]string, 0, len(rl))
	for n := range rl {
		names = append(names, string(n))
	}
	slices.SortFunc(names, func(a, b string) int { return quantity.CompareNames(corev1.ResourceName(a), corev1.ResourceName(b)) })
	parts := make([]string, 0, len(names))
	for _, n := range names {
		q := rl[corev1.ResourceName(n)]
		parts = append(parts, n+"="+q.String())
	}
	return strings.Join(parts, ",")
}
