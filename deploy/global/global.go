// Package global carries the manifests caldera-global installs next to a
// Karmada control plane: the resource interpreter customizations of
// Volcano's Job and Queue, and the policy that copies Queues and
// PriorityClasses to every member.
package global

import "embed"

// Manifests holds the YAML files of this directory.
//
//go:embed *.yaml
var Manifests embed.FS
