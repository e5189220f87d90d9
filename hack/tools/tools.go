//go:build tools

// Package tools pins the versions of the code generators the project runs.
package tools

import (
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
