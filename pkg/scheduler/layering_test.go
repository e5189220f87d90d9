package scheduler_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDecisionPackagesImportNoClient: the scheduler's model, framework,
// actions and plugins decide from the snapshot alone, so that the
// simulator and tests run them without a cluster. Neither client-go nor
// kube-scheduler's own packages (which bring client-go's clientset) may be
// among their dependencies; kube-scheduler's plugins run behind
// framework.PodFit, in package podfit.
func TestDecisionPackagesImportNoClient(t *testing.T) {
	const module = "github.com/caldera-sh/caldera/pkg/scheduler/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`,
		module+"api/...", module+"framework/...", module+"actions/...", module+"plugins/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 20 {
		t.Fatalf("go list named %d packages, want the scheduler's decision packages:\n%s", len(lines), out)
	}
	for _, line := range lines {
		pkg, deps, _ := strings.Cut(line, " ")
		for _, dep := range strings.Fields(deps) {
			if strings.HasPrefix(dep, "k8s.io/client-go/") || strings.HasPrefix(dep, "k8s.io/kubernetes/") || dep == "k8s.io/client-go" {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
