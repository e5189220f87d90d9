// Package clusterapicrds holds the CRDs generated from Caldera's mirror of
// Cluster API (pkg/federation/clusterapi). Tests install them in an API
// server that plays a management cluster; they are never shipped.
package clusterapicrds

import "embed"

// CRDs holds the CRDs.
//
//go:embed *.yaml
var CRDs embed.FS

// Dir is the directory of the CRDs inside CRDs.
const Dir = "."
