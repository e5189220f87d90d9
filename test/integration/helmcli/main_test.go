//go:build integration

// Package helmcli installs Caldera with the Helm command line as the install
// pages tell users to, on an API server of its own (no other test's objects
// in the way of Helm's ownership checks).
package helmcli

import (
	"os"
	"testing"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/caldera-sh/caldera/test/integration/framework"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(framework.Main(m, framework.Options{}, &fw))
}
