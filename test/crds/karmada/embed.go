// Package karmadacrds holds the CRDs generated from Caldera's mirror of
// Karmada's API (pkg/federation/karmada). Tests install them in an API
// server that plays the Karmada control plane; they are never shipped.
package karmadacrds

import "embed"

// CRDs holds the CRDs.
//
//go:embed *.yaml
var CRDs embed.FS

// Dir is the directory of the CRDs inside CRDs.
const Dir = "."
