//go:build integration

// Package deploy tests deploy/'s kustomizations against a real API server:
// each applies in a server-side dry run, and the member components, run
// with their service accounts' identities and nothing more than
// deploy/member/rbac.yaml grants them, run a gang job to completion of its
// placement.
package deploy

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
	os.Exit(framework.Main(m, framework.Options{Kwok: true, Karmada: true}, &fw))
}
