// Package global carries caldera-global's manifests, one kustomization per
// cluster they go to: karmada/ (the Karmada API server: the resource
// interpreter customizations of Volcano's Job, Queue and HyperJob, the
// policy that copies Queues and PriorityClasses to every member, and
// caldera-global's permissions), host/ (caldera-global itself, on the
// cluster hosting Karmada) and cluster-api/ (its permissions on a Cluster
// API management cluster).
package global

import "embed"

// Manifests holds the YAML files of karmada/, host/ and cluster-api/
// (kustomization.yaml files included).
//
//go:embed karmada/*.yaml host/*.yaml cluster-api/*.yaml
var Manifests embed.FS

// Kustomizations are the directories of Manifests, each a kustomization.
var Kustomizations = []string{"karmada", "host", "cluster-api"}
