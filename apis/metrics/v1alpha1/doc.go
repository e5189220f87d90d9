// Package v1alpha1 holds the metrics.caldera.sh/v1alpha1 API: NodeUsage,
// what one node and its pods really use, averaged over a window, as the
// node agent measures it. The scheduler's usage plugin places pods by it
// and the load-aware descheduler moves pods off nodes that run hot.
//
// +kubebuilder:object:generate=true
// +groupName=metrics.caldera.sh
package v1alpha1
