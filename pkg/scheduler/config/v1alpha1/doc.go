// Package v1alpha1 holds scheduler.config.caldera.sh/v1alpha1, the component
// configuration of caldera-scheduler: which pods it serves, the actions of a
// scheduling cycle, the tiers of plugins with their typed arguments, cycle
// timing, the binder, node sampling, the client connection, leader election
// and the serving addresses.
//
// The file is not a Kubernetes object: it is read from disk at start-up. A
// Volcano volcano-scheduler.conf is accepted too and translated into this
// type (see package volcano and config.Load).
//
// +kubebuilder:object:generate=true
// +groupName=scheduler.config.caldera.sh
package v1alpha1
