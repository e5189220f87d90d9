package capacity

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// set sets one amount of r, in the units Resource keeps it.
func set(r *api.Resource, name corev1.ResourceName, v int64) {
	d := v - r.Get(name)
	if d == 0 {
		return
	}
	var q *resource.Quantity
	if name == corev1.ResourceMemory {
		q = resource.NewQuantity(d, resource.BinarySI)
	} else {
		q = resource.NewMilliQuantity(d, resource.DecimalSI)
	}
	r.Add(api.NewResource(corev1.ResourceList{name: *q}))
}

// exceeded lists the resources req asks for where used plus req goes above
// limit. With all unset, only limits tighter than the cluster's total count:
// the nodes themselves keep a queue within the cluster (and know better,
// counting releasing resources). Pod slots count only where a limit is
// tighter than the cluster's.
func exceeded(used, req, limit, total *api.Resource, all bool) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range req.Names() {
		v := req.Get(name)
		if v <= 0 {
			continue
		}
		if limit.Get(name) >= total.Get(name) && (!all || name == corev1.ResourcePods) {
			continue
		}
		if used.Get(name)+v > limit.Get(name) {
			out = append(out, name)
		}
	}
	return out
}

// shown lists the resources a reason prints: those req asks for, pod slots
// only when they are among the exceeded ones.
func shown(req *api.Resource, over []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range req.Names() {
		if req.Get(name) > 0 && (name != corev1.ResourcePods || slices.Contains(over, name)) {
			out = append(out, name)
		}
	}
	return out
}

// amounts renders the named amounts of r as Resource.String does: "cpu 4,
// memory 8Gi", "none" when all are zero.
func amounts(r *api.Resource, names []corev1.ResourceName) string {
	var parts []string
	for _, name := range names {
		if r.Get(name) != 0 {
			parts = append(parts, fmt.Sprintf("%s %s", name, r.Quantity(name).String()))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
