//go:build tools

// Package tools pins the Helm command line the tests install the charts
// with, as docs/install.md tells users to (make helm builds bin/helm).
package tools

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
