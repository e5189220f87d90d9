//go:build integration

package helmcli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/pkg/controlplane"
)

const repoRoot = "../../.."

// helmLines are the `helm ...` command lines of a page's code blocks, in
// order, continuation lines joined.
func helmLines(t *testing.T, page string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inBlock, joined := false, ""
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		if joined != "" || strings.HasPrefix(trimmed, "helm ") {
			joined += strings.TrimSuffix(trimmed, "\\") + " "
			if !strings.HasSuffix(trimmed, "\\") {
				out = append(out, strings.Join(strings.Fields(joined), " "))
				joined = ""
			}
		}
	}
	return out
}

// helm runs the Helm command line (hack/build-helm.sh builds it) from the
// repository's root against the test's API server, as a user would.
func helm(t *testing.T, line string) string {
	t.Helper()
	return helmOn(t, fw.Kubeconfig(), line)
}

// helmOn runs the Helm command line against the API server of the
// kubeconfig.
func helmOn(t *testing.T, kubeconfig, line string) string {
	t.Helper()
	bin, err := controlplane.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(bin, "helm")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%v (make helm builds it: hack/build-helm.sh)", err)
	}
	// The pages name the Karmada API server's kubeconfig; KUBECONFIG says
	// which API server plays it.
	line = regexp.MustCompile(`--kubeconfig=\S+`).ReplaceAllString(line, "")
	args := strings.Fields(strings.TrimPrefix(line, "helm "))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = repoRoot
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// deployed checks that Helm reports the release deployed.
func deployed(t *testing.T, kubeconfig, release, namespace string) {
	t.Helper()
	var status struct {
		Info struct {
			Status string `json:"status"`
		} `json:"info"`
	}
	out := helmOn(t, kubeconfig, "helm status "+release+" -n "+namespace+" -o json")
	if err := json.Unmarshal([]byte(out), &status); err != nil {
		t.Fatalf("helm status %s: %v\n%s", release, err, out)
	}
	if status.Info.Status != "deployed" {
		t.Fatalf("release %s is %q, not deployed", release, status.Info.Status)
	}
}

func replicas(t *testing.T, namespace, name string) int32 {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
		t.Fatalf("Deployment %s/%s: %v", namespace, name, err)
	}
	return *d.Spec.Replicas
}

func gone(t *testing.T, namespace, name string) {
	t.Helper()
	err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, &appsv1.Deployment{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Deployment %s/%s after uninstalling: %v", namespace, name, err)
	}
}

// TestInstallPagesWithHelm runs the Helm commands of docs/install.md and
// docs/federation.md, in the order a user meets them, with the Helm
// command line: a member with the defaults, uninstalled as the page says,
// again with a documented value set; then the global layer's two charts
// on the API server that plays Karmada's.
func TestInstallPagesWithHelm(t *testing.T) {
	member := helmLines(t, "docs/install.md")
	if len(member) != 2 {
		t.Fatalf("docs/install.md has %d helm commands, the test knows 2: %q", len(member), member)
	}
	const uninstall = "helm uninstall caldera -n caldera-system"
	if page, _ := os.ReadFile(filepath.Join(repoRoot, "docs/install.md")); !strings.Contains(string(page), "`"+uninstall+"`") {
		t.Fatalf("docs/install.md no longer says %q", uninstall)
	}

	helm(t, member[0])
	deployed(t, fw.Kubeconfig(), "caldera", "caldera-system")
	if n := replicas(t, "caldera-system", "caldera-scheduler"); n != 2 {
		t.Errorf("the defaults run %d scheduler replicas, want 2", n)
	}
	helm(t, uninstall)
	gone(t, "caldera-system", "caldera-scheduler")

	helm(t, member[1])
	deployed(t, fw.Kubeconfig(), "caldera", "caldera-system")
	if n := replicas(t, "caldera-system", "caldera-scheduler"); n != 1 {
		t.Errorf("single-replica-values run %d scheduler replicas, want 1", n)
	}
	helm(t, uninstall)
	gone(t, "caldera-system", "caldera-scheduler")

	// The global layer goes to the Karmada API server and the cluster
	// hosting Karmada: a second API server (on the same etcd) with
	// Karmada's CRDs plays both.
	global := helmLines(t, "docs/federation.md")
	if len(global) != 2 {
		t.Fatalf("docs/federation.md has %d helm commands, the test knows 2: %q", len(global), global)
	}
	karmada := fw.StartKarmada(t)
	// Karmada keeps its members' secrets in karmada-cluster, which it
	// makes when it is installed.
	if err := karmada.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-cluster"}}); err != nil {
		t.Fatal(err)
	}
	kc := karmada.APIServer.Kubeconfig
	helmOn(t, kc, global[0])
	deployed(t, kc, "caldera-global-karmada", "karmada-system")
	helmOn(t, kc, global[1])
	deployed(t, kc, "caldera-global", "caldera-system")
	d := &appsv1.Deployment{}
	if err := karmada.Client.Get(t.Context(), client.ObjectKey{Namespace: "caldera-system", Name: "caldera-global"}, d); err != nil {
		t.Fatalf("the caldera-global Deployment: %v", err)
	}
	helmOn(t, kc, "helm uninstall caldera-global -n caldera-system")
	helmOn(t, kc, "helm uninstall caldera-global-karmada -n karmada-system")
	if err := karmada.Client.Get(t.Context(), client.ObjectKey{Namespace: "caldera-system", Name: "caldera-global"}, d); !apierrors.IsNotFound(err) {
		t.Errorf("the caldera-global Deployment after uninstalling: %v", err)
	}
}
