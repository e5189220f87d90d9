// Package clusterapi is Caldera's mirror of the part of Cluster API
// (cluster.x-k8s.io) that caldera-global reads to list member clusters
// from a management cluster: the Cluster object, one package per group
// version below this one. Field and JSON names are Cluster API's; fields
// Caldera does not read are left out, and Caldera never writes these
// objects. A workload cluster's kubeconfig is the Secret
// <cluster>-kubeconfig in the Cluster's namespace, key "value", as Cluster
// API writes it.
//
// The CRDs generated from these types (test/crds/clusterapi) stand in for
// Cluster API's in tests only.
package clusterapi

import (
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1beta2 "github.com/caldera-sh/caldera/pkg/federation/clusterapi/v1beta2"
)

// KubeconfigSecretKey is the key of the kubeconfig in a cluster's
// kubeconfig Secret.
const KubeconfigSecretKey = "value"

// KubeconfigSecretName is the name of the cluster's kubeconfig Secret.
func KubeconfigSecretName(cluster string) string { return cluster + "-kubeconfig" }

// AddToScheme registers every mirrored Cluster API type.
func AddToScheme(s *runtime.Scheme) error { return clusterv1beta2.AddToScheme(s) }
