//go:build e2e

// Package e2e runs Caldera's binaries as a user would.
package e2e

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/caldera-sh/caldera/test/poll"
)

// TestLocalUpAndDown starts `calderactl local up` (what `make run` runs),
// applies every example with kubectl, lists the jobs with calderactl, asks
// `local status`, stops it with `local down` (which interrupts it like
// Ctrl-C), and checks that it exits cleanly, frees its API server port and
// leaves no process behind.
func TestLocalUpAndDown(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	env := startLocal(ctx, t)
	binDir, dir, calderactl, cmd, exited, logText := env.binDir, env.dir, env.calderactl, env.cmd, env.exited, env.logText

	kubeconfig := filepath.Join(dir, "kubeconfig")
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, filepath.Join(binDir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := kubectl("get", "nodes", "--no-headers"); strings.Count(out, " Ready ") != 12 {
		t.Errorf("want 12 Ready nodes, got:\n%s", out)
	}
	kubectl("apply", "--server-side", "--recursive", "-f", "../../examples")
	if out := kubectl("get", "queues", "-o", "name"); !strings.Contains(out, "queue.scheduling.volcano.sh/default") || !strings.Contains(out, "queue.scheduling.volcano.sh/root") {
		t.Errorf("default queues missing:\n%s", out)
	}

	// The scheduler places the quickstart gang, and kwok runs it.
	poll.Eventually(t, ctx, 60*time.Second, "quickstart gang running", func() (bool, string) {
		out := kubectl("get", "pods", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.phase} {end}")
		if countRunning(out, "quickstart-") == 3 {
			return true, ""
		}
		return false, fmt.Sprintf("%s\nscheduler log:\n%s", out, readFile(filepath.Join(dir, "caldera-scheduler.log")))
	})
	// Its PodGroup shows Running once the scheduler has seen the pods
	// start.
	poll.Eventually(t, ctx, 30*time.Second, "quickstart PodGroup Running", func() (bool, string) {
		out := kubectl("get", "podgroup", "quickstart", "-o", "jsonpath={.status.phase}")
		return out == "Running", "phase " + out
	})
	// The controller manager discovers the HyperNodes of the simulated
	// network from the nodes' spine and leaf labels.
	poll.Eventually(t, ctx, 60*time.Second, "discovered HyperNodes there", func() (bool, string) {
		out := kubectl("get", "hypernodes", "-l", "topology.caldera.sh/discovered-by=label", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.nodeCount} {end}")
		if strings.Count(out, "=") == 5 && strings.Contains(out, "fabric-t1-leaf-0=4") {
			return true, ""
		}
		return false, fmt.Sprintf("%q\ncontroller manager log:\n%s", out, readFile(filepath.Join(dir, "caldera-controller-manager.log")))
	})
	// The controller manager runs a Volcano Job from the examples.
	poll.Eventually(t, ctx, 60*time.Second, "tensorflow-dist-mnist Running with 3 pods", func() (bool, string) {
		out := kubectl("get", "vcjob", "tensorflow-dist-mnist", "-o", "jsonpath={.status.state.phase}/{.status.running}")
		if out == "Running/3" {
			return true, ""
		}
		return false, fmt.Sprintf("%s\ncontroller manager log:\n%s", out, readFile(filepath.Join(dir, "caldera-controller-manager.log")))
	})

	// kube-controller-manager runs what a cluster runs: the example
	// Deployment gets its pods, placed as a gang; deleting a Job takes its
	// pods and PodGroup with it; a deleted namespace goes away.
	waitFor := func(what string, done func() (bool, string)) {
		t.Helper()
		poll.Eventually(t, ctx, 60*time.Second, what, func() (bool, string) {
			if ok, last := done(); !ok {
				return false, fmt.Sprintf("%s\nkube-controller-manager log:\n%s", last, tail(readFile(filepath.Join(dir, "kube-controller-manager-local.log")), 40))
			}
			return true, ""
		})
	}
	waitFor("the example Deployment's 2 pods running", func() (bool, string) {
		out := kubectl("get", "pods", "-l", "app=inference", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.phase} {end}")
		return strings.Count(out, "=Running") == 2, out
	})
	// The nodes and volumes have what the examples ask for: GPU memory to
	// share, a volume for the MPI job's claim, and the example DRA
	// driver's GPUs for the DRA job's claims.
	for _, job := range []string{"shared-inference", "lm-mpi-job", "dra-training"} {
		waitFor(job+" running", func() (bool, string) {
			out := kubectl("get", "vcjob", job, "-o", "jsonpath={.status.state.phase}")
			return out == "Running", out
		})
	}
	// The local scheduler shares GPU cards: each shared-inference server
	// pod names the card it got.
	if out := kubectl("get", "pods", "-l", "volcano.sh/job-name=shared-inference,volcano.sh/task-spec=server", "-o", `jsonpath={range .items[*]}{.metadata.annotations.volcano\.sh/gpu-index} {end}`); len(strings.Fields(out)) != 4 {
		t.Errorf("shared-inference server pods' volcano.sh/gpu-index annotations = %q, want 4 cards named", out)
	}
	// Each dra-training worker's claim holds a GPU of the worker's node,
	// reserved for it.
	nodeOf := map[string]string{}
	for _, f := range strings.Fields(kubectl("get", "pods", "-l", "volcano.sh/job-name=dra-training", "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName} {end}`)) {
		name, node, _ := strings.Cut(f, "=")
		nodeOf[name] = node
	}
	held := 0
	for _, f := range strings.Fields(kubectl("get", "resourceclaims", "-o", `jsonpath={range .items[*]}{.status.reservedFor[0].name}={.status.allocation.devices.results[0].pool} {end}`)) {
		pod, pool, _ := strings.Cut(f, "=")
		if node, ok := nodeOf[pod]; ok {
			held++
			if pool != node {
				t.Errorf("%s runs on %s with a GPU of %q", pod, node, pool)
			}
		}
	}
	if len(nodeOf) != 4 || held != 4 {
		t.Errorf("dra-training: %d workers %v, %d of them holding a GPU; want 4 and 4", len(nodeOf), nodeOf, held)
	}
	kubectl("delete", "vcjob", "ddp", "--wait=true")
	waitFor("ddp's pods and PodGroup gone", func() (bool, string) {
		pods := kubectl("get", "pods", "-l", "volcano.sh/job-name=ddp", "-o", "name")
		pgs := kubectl("get", "podgroups", "-o", "name")
		return pods == "" && !strings.Contains(pgs, "podgroup.scheduling.volcano.sh/ddp-"), pods + pgs
	})
	kubectl("create", "namespace", "scratch")
	kubectl("delete", "namespace", "scratch", "--wait=false")
	waitFor("namespace scratch gone", func() (bool, string) {
		out := kubectl("get", "namespaces", "-o", "name")
		return !strings.Contains(out, "namespace/scratch"), out
	})

	// A new user's paths, literally: README's commands, then getting
	// started's (which applies every example again after making its own
	// queue), on top of the examples already applied.
	for _, doc := range []struct{ file, section string }{{"../../README.md", "While `make run` is up"}, {"../../docs/getting-started.md", "## Run something"}} {
		for _, line := range docShellLines(t, doc.file, doc.section) {
			args := strings.Fields(line)
			c := exec.CommandContext(ctx, filepath.Join(binDir, strings.TrimPrefix(args[0], "bin/")), args[1:]...)
			c.Dir = "../.."
			c.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
			if out, err := c.CombinedOutput(); err != nil {
				t.Errorf("%s: %s: %v\n%s", doc.file, line, err, out)
			}
		}
	}

	// The command local up prints for the scheduler's explanations, run
	// as printed: a token of the metrics reader, over HTTPS.
	var explain string
	for _, line := range strings.Split(logText(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "curl ") {
			explain = strings.TrimSpace(line)
		}
	}
	if explain == "" {
		t.Errorf("local up printed no curl command:\n%s", logText())
	} else {
		c := exec.CommandContext(ctx, "bash", "-c", explain)
		c.Dir = "../.."
		c.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		if out, err := c.CombinedOutput(); err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "[") {
			t.Errorf("%s: %v\n%s", explain, err, out)
		}
	}

	server := apiServerAddress(t, kubeconfig)
	pids := descendants(cmd.Process.Pid)
	if len(pids) < 12 {
		t.Errorf("want etcd, kube-apiserver, kwok, kube-controller-manager, kube-scheduler, caldera-webhook, caldera-scheduler, caldera-controller-manager and 4 caldera-agents running under local up, found pids %v", pids)
	}
	// The agents publish the CPU nodes' batch resources: cpu-0's online
	// pod requests 8 CPUs it does not use (the simulated node is idle).
	kubectl("apply", "--server-side", "-f", "testdata/online-pod-cpu-0.yaml")
	poll.Eventually(t, ctx, 60*time.Second, "batch-cpu on cpu-0", func() (bool, string) {
		out := kubectl("get", "node", "cpu-0", "-o", "jsonpath={.status.allocatable}")
		if strings.Contains(out, "kubernetes.io/batch-cpu") {
			return true, ""
		}
		return false, fmt.Sprintf("%s\nagent log:\n%s", out, readFile(filepath.Join(dir, "caldera-agent-cpu-0.log")))
	})
	// The webhook refuses what the CRD schema cannot: a Job in a queue that
	// does not exist.
	if out, err := exec.CommandContext(ctx, filepath.Join(binDir, "kubectl"), "--kubeconfig", kubeconfig, "create", "-f", "testdata/job-unknown-queue.yaml").CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "spec.queue") || !strings.Contains(string(out), "does not exist") {
		t.Errorf("a Job in an unknown queue: err %v, output %s", err, out)
	}
	// calderactl itself, on the local environment.
	ctl := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, calderactl, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("calderactl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The demo job local up submitted runs beside the examples'.
	poll.Eventually(t, ctx, 60*time.Second, "calderactl job list: demo-training running 5 pods", func() (bool, string) {
		out := ctl("--kubeconfig", kubeconfig, "job", "list")
		return strings.Contains(out, "tensorflow-dist-mnist") && regexp.MustCompile(`demo-training +default +Running +5 +0 +5 `).MatchString(out), "\n" + out
	})
	if out := ctl("local", "status", "--dir", dir); !strings.HasPrefix(out, fmt.Sprintf("running (pid %d)", cmd.Process.Pid)) || !strings.Contains(out, "nodes:      12") {
		t.Errorf("local status:\n%s", out)
	}
	// local down stops it as Ctrl-C does.
	if out := ctl("local", "down", "--dir", dir); !strings.Contains(out, "stopped.") {
		t.Errorf("local down:\n%s", out)
	}
	<-exited
	if err := cmd.Wait(); err != nil {
		t.Fatalf("local up exited with %v:\n%s", err, logText())
	}
	if !strings.Contains(logText(), "stopped.") {
		t.Errorf("no clean stop in output:\n%s", logText())
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("process %d outlived local up", pid)
		}
	}
	if c, err := net.DialTimeout("tcp", server, time.Second); err == nil {
		c.Close()
		t.Errorf("API server port %s still open after local up exited", server)
	}
	if out := ctl("local", "status", "--dir", dir); !strings.HasPrefix(out, "not running") {
		t.Errorf("local status after down:\n%s", out)
	}
}

// countRunning counts "<prefix>...=Running" entries in kubectl's output.
func countRunning(out, prefix string) int {
	n := 0
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, prefix) && strings.HasSuffix(f, "=Running") {
			n++
		}
	}
	return n
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func apiServerAddress(t *testing.T, kubeconfig string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			t.Fatal(err)
		}
		return u.Host
	}
	t.Fatal("kubeconfig has no cluster")
	return ""
}

// descendants lists the pids whose parent chain leads to pid.
func descendants(pid int) []int {
	parents := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var p int
		if _, err := fmt.Sscan(e.Name(), &p); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold spaces.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		var ppid int
		if len(fields) > 1 {
			_, _ = fmt.Sscan(fields[1], &ppid)
		}
		parents[p] = ppid
	}
	var out []int
	for p := range parents {
		for q := parents[p]; q > 1; q = parents[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// docShellLines returns the commands of the first sh block after the line
// starting with section in a document: its lines that run bin/calderactl
// or bin/kubectl, without their trailing comments.
func docShellLines(t *testing.T, file, section string) []string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inSection, inBlock := false, false
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case !inSection:
			inSection = strings.HasPrefix(line, section)
		case !inBlock && strings.HasPrefix(line, "```sh"):
			inBlock = true
		case inBlock && strings.HasPrefix(line, "```"):
			if len(out) == 0 {
				t.Fatalf("%s: no commands under %q", file, section)
			}
			return out
		case inBlock && (strings.HasPrefix(line, "bin/calderactl ") || strings.HasPrefix(line, "bin/kubectl ")):
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			out = append(out, strings.TrimSpace(line))
		}
	}
	t.Fatalf("%s: no sh block under %q", file, section)
	return nil
}
