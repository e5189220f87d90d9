// Package v1alpha1 holds the datadependency.volcano.sh/v1alpha1 API, which
// places workloads next to their data across member clusters:
// DataSourceClaim, a workload's declaration that it reads a data source, and
// DataSource, the cluster-scoped cached answer to where that data lives.
//
// +kubebuilder:object:generate=true
// +groupName=datadependency.volcano.sh
package v1alpha1
