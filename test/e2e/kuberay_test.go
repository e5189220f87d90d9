//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caldera-sh/caldera/test/poll"
)

// TestKubeRayGang: the KubeRay operator (built from its module by
// hack/build-operators.sh), started with --batch-scheduler=volcano against
// `make run`'s environment, gives the RayCluster of docs/integrations.md a
// PodGroup, and Caldera places its head and its workers together; a
// RayCluster larger than the cluster stays whole and Pending, its PodGroup
// saying why, with none of its pods bound.
func TestKubeRayGang(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	env := startLocal(ctx, t)
	defer env.down(ctx, t)
	operator := filepath.Join(env.binDir, "ray-operator")
	if _, err := os.Stat(operator); err != nil {
		t.Fatalf("%v (make test-operators builds it: hack/build-operators.sh)", err)
	}
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := env.kubectl(ctx, args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	// kubectl reads a directory's files, not a link's: resolve bin/'s link
	// into the cache.
	crds, err := filepath.EvalSymlinks(filepath.Join(env.binDir, "ray-operator-crds"))
	if err != nil {
		t.Fatalf("%v (make operators builds it: hack/build-operators.sh)", err)
	}
	kubectl("apply", "--server-side", "-f", crds)
	kubectl("wait", "--for=condition=Established", "crd/rayclusters.ray.io", "--timeout=60s")

	// The operator, as its Helm chart runs it with batchScheduler.name=volcano.
	logPath := filepath.Join(env.dir, "ray-operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, operator, "--batch-scheduler=volcano", "--metrics-addr=0", "--health-probe-bind-address=0", "--enable-leader-election=false")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("ray-operator log:\n%s", tail(readFile(logPath), 40))
		}
	}()

	// The RayCluster of the page users read.
	fits := filepath.Join(env.dir, "raycluster.yaml")
	if err := os.WriteFile(fits, []byte(firstYAMLBlock(t, "../../docs/integrations.md", "## KubeRay")), 0o644); err != nil {
		t.Fatal(err)
	}
	kubectl("apply", "--server-side", "-f", fits, "-f", "testdata/kuberay/raycluster-too-large.yaml")

	// The operator's PodGroup: the head and three workers, all or none.
	poll.Eventually(t, ctx, 90*time.Second, "the PodGroup of RayCluster fits, with minMember 4", func() (bool, string) {
		out, _ := env.kubectl(ctx, "get", "podgroup", "ray-fits-pg", "-o", "jsonpath={.spec.minMember} {.spec.queue}")
		return out == "4 default", out
	})
	poll.Eventually(t, ctx, 90*time.Second, "the four pods of RayCluster fits bound and the PodGroup Running", func() (bool, string) {
		pods := kubectl("get", "pods", "-l", "ray.io/cluster=fits", "-o",
			`jsonpath={range .items[*]}{.metadata.name} {.spec.schedulerName} {.metadata.annotations.scheduling\.k8s\.io/group-name} {.spec.nodeName}{"\n"}{end}`)
		bound := 0
		for _, l := range strings.Split(strings.TrimSpace(pods), "\n") {
			f := strings.Fields(l)
			if len(f) == 4 && f[1] == "volcano" && f[2] == "ray-fits-pg" {
				bound++
			}
		}
		phase := kubectl("get", "podgroup", "ray-fits-pg", "-o", "jsonpath={.status.phase}")
		return bound == 4 && phase == "Running", fmt.Sprintf("phase %s, pods (name scheduler group node):\n%s", phase, pods)
	})

	// Too large: the scheduler's reason on the PodGroup is the barrier;
	// then not one of its pods is bound.
	var reason string
	poll.Eventually(t, ctx, 90*time.Second, "the PodGroup of RayCluster too-large Unschedulable, saying why", func() (bool, string) {
		out, _ := env.kubectl(ctx, "get", "podgroup", "ray-too-large-pg", "-o",
			`jsonpath={.status.phase}|{range .status.conditions[?(@.type=="Unschedulable")]}{.status} {.reason}: {.message}{end}`)
		phase, cond, _ := strings.Cut(out, "|")
		reason = cond
		return phase == "Pending" && strings.HasPrefix(cond, "True ") && strings.Contains(cond, "cpu"), out
	})
	t.Logf("RayCluster too-large: %s", reason)
	if out := kubectl("get", "pods", "-l", "ray.io/cluster=too-large", "-o", "jsonpath={range .items[*]}{.spec.nodeName}{end}"); out != "" {
		t.Errorf("pods of RayCluster too-large bound: %q", out)
	}
}

// firstYAMLBlock is the first ```yaml block of a markdown file after the
// heading given.
func firstYAMLBlock(t *testing.T, path, heading string) string {
	t.Helper()
	text := readFile(path)
	_, after, ok := strings.Cut(text, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no heading %q", path, heading)
	}
	_, block, ok := strings.Cut(after, "```yaml\n")
	if !ok {
		t.Fatalf("%s has no yaml block under %q", path, heading)
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}
