// Package deploy carries the project's generated manifests into the binaries
// that install them (the local environment and the test harnesses).
package deploy

import "embed"

// CRDs holds the CustomResourceDefinitions of every Caldera API, under crds/.
//
//go:embed crds/*_*.yaml
var CRDs embed.FS

// CRDDir is the directory of CRDs inside CRDs.
const CRDDir = "crds"

// MemberRBAC is deploy/member/rbac.yaml: the ClusterRoles, Roles and
// bindings of the member components' service accounts.
//
//go:embed member/rbac.yaml
var MemberRBAC []byte
