// Package layering checks the import rules the layout promises
// (docs/architecture.md): decisions are pure functions of a snapshot, and
// the member-cluster binaries link nothing of the federation layer.
package layering

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/caldera-sh/caldera/"

// deps returns, for each package the patterns name, its dependencies.
func deps(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	args := []string{"list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}
	for _, p := range patterns {
		args = append(args, module+p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, rest, _ := strings.Cut(line, " ")
		m[pkg] = strings.Fields(rest)
	}
	return m
}

// clientPackage reports whether dep talks to an API server or brings
// kube-scheduler's or controller-runtime's machinery with it.
func clientPackage(dep string) bool {
	return dep == "k8s.io/client-go" || strings.HasPrefix(dep, "k8s.io/client-go/") ||
		strings.HasPrefix(dep, "k8s.io/kubernetes/") ||
		dep == "sigs.k8s.io/controller-runtime" || strings.HasPrefix(dep, "sigs.k8s.io/controller-runtime/")
}

// TestDecisionPackagesImportNoClient: the decision cores decide from what
// they are given alone, so that the simulator, benchmarks and table tests
// run them without a cluster. kube-scheduler's plugins, which bring
// client-go's clientset, run behind framework.PodFit in package podfit.
func TestDecisionPackagesImportNoClient(t *testing.T) {
	cores := []string{
		"pkg/scheduler/api/...", "pkg/scheduler/framework/...", "pkg/scheduler/actions/...", "pkg/scheduler/plugins/...",
		"pkg/controllers/job/core", "pkg/controllers/cronjob/core", "pkg/controllers/jobflow/core", "pkg/topology",
		"pkg/federation/dispatch", "pkg/federation/placement", "pkg/federation/resources",
		"pkg/hyperjob/split", "pkg/hyperjob/lifecycle", "pkg/datadep",
		"pkg/cli/explain/narrate",
	}
	got := deps(t, cores...)
	if len(got) < 30 {
		t.Fatalf("go list named %d packages, want every decision package", len(got))
	}
	for pkg, ds := range got {
		for _, dep := range ds {
			if clientPackage(dep) {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}

// TestMemberBinariesLinkNoFederation: the binaries that run in a member
// cluster carry neither caldera-global's controllers nor the Karmada and
// Cluster API mirrors.
func TestMemberBinariesLinkNoFederation(t *testing.T) {
	got := deps(t, "cmd/caldera-scheduler", "cmd/caldera-controller-manager", "cmd/caldera-webhook", "cmd/caldera-agent")
	if len(got) != 4 {
		t.Fatalf("go list named %d binaries, want 4", len(got))
	}
	for bin, ds := range got {
		for _, dep := range ds {
			if strings.HasPrefix(dep, module+"pkg/federation/") || strings.HasPrefix(dep, module+"pkg/hyperjob/controller") ||
				strings.HasPrefix(dep, module+"pkg/datadep/controller") {
				t.Errorf("%s links %s", bin, dep)
			}
		}
	}
}
