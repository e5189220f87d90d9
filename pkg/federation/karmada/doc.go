// Package karmada is Caldera's mirror of the parts of Karmada's API it reads
// and writes: Cluster (cluster.karmada.io/v1alpha1), PropagationPolicy and
// ClusterPropagationPolicy (policy.karmada.io/v1alpha1), ResourceBinding and
// ClusterResourceBinding (work.karmada.io/v1alpha2), and
// ResourceInterpreterCustomization (config.karmada.io/v1alpha1), one
// package per group version below this one. Field and JSON names are
// Karmada's; fields Caldera does not use are left out, and an object read
// and written back through these types keeps them only where the write is
// a patch of the fields named here. AddToScheme registers them all.
//
// The CRDs generated from these types (test/crds/karmada) stand in for
// Karmada's in tests only; a real Karmada control plane serves its own.
package karmada
