//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caldera-sh/caldera/test/poll"
)

// The Training Operator reads its webhook's serving certificate from this
// directory, where a pod has its Secret mounted; the test plays the
// kubelet and copies it there.
const trainingOperatorCertDir = "/tmp/k8s-webhook-server/serving-certs"

// TestTrainingOperatorGang: the Kubeflow Training Operator (built from its
// module by hack/build-operators.sh), started with
// --gang-scheduler-name=volcano against `make run`'s environment, gives the
// PyTorchJob of docs/integrations.md a PodGroup and creates its pods only
// once Caldera has admitted the group (Inqueue); Caldera places the master
// and the workers together. A PyTorchJob larger than the cluster is never
// admitted: its PodGroup stays Pending saying why, and the operator creates
// none of its pods.
func TestTrainingOperatorGang(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	env := startLocal(ctx, t)
	defer env.down(ctx, t)
	operator := filepath.Join(env.binDir, "training-operator")
	if _, err := os.Stat(operator); err != nil {
		t.Fatalf("%v (make operators builds it: hack/build-operators.sh)", err)
	}
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := env.kubectl(ctx, args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	crds, err := filepath.EvalSymlinks(filepath.Join(env.binDir, "training-operator-crds"))
	if err != nil {
		t.Fatalf("%v (make operators builds it: hack/build-operators.sh)", err)
	}
	kubectl("apply", "--server-side", "-f", crds)
	kubectl("wait", "--for=condition=Established", "crd/pytorchjobs.kubeflow.org", "--timeout=60s")

	// What the operator's manifests give it in a cluster: its namespace,
	// the Secret its certificate rotator fills, and the validating webhook
	// configuration the rotator writes its CA into (here without webhooks:
	// the API server cannot reach the operator's Service name).
	setup := filepath.Join(env.dir, "training-operator-setup.yaml")
	if err := os.WriteFile(setup, []byte(`apiVersion: v1
kind: Namespace
metadata: {name: kubeflow}
---
apiVersion: v1
kind: Secret
metadata: {name: training-operator-webhook-cert, namespace: kubeflow}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: validator.training-operator.kubeflow.org}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	kubectl("apply", "--server-side", "-f", setup)
	if err := os.RemoveAll(trainingOperatorCertDir); err != nil {
		t.Fatal(err)
	}

	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(env.dir, "training-operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, operator, "--gang-scheduler-name=volcano", "--enable-scheme=pytorchjob",
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--webhook-server-port="+strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.kubeconfig, "MY_POD_NAMESPACE=kubeflow")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("training-operator log:\n%s", tail(readFile(logPath), 40))
		}
	}()

	// The kubelet's part: the rotator's certificate, mounted where the
	// operator reads it.
	poll.Eventually(t, ctx, 60*time.Second, "the operator's certificate in its Secret", func() (bool, string) {
		out, err := env.kubectl(ctx, "-n", "kubeflow", "get", "secret", "training-operator-webhook-cert", "-o", `jsonpath={.data.tls\.crt} {.data.tls\.key}`)
		f := strings.Fields(out)
		if err != nil || len(f) != 2 {
			return false, out
		}
		if err := os.MkdirAll(trainingOperatorCertDir, 0o755); err != nil {
			return false, err.Error()
		}
		for i, name := range []string{"tls.crt", "tls.key"} {
			pem, err := base64.StdEncoding.DecodeString(f[i])
			if err != nil {
				return false, err.Error()
			}
			if err := os.WriteFile(filepath.Join(trainingOperatorCertDir, name), pem, 0o600); err != nil {
				return false, err.Error()
			}
		}
		return true, ""
	})

	fits := filepath.Join(env.dir, "pytorchjob.yaml")
	if err := os.WriteFile(fits, []byte(firstYAMLBlock(t, "../../docs/integrations.md", "## Kubeflow Training Operator")), 0o644); err != nil {
		t.Fatal(err)
	}
	kubectl("apply", "--server-side", "-f", fits, "-f", "testdata/trainingoperator/pytorchjob-too-large.yaml")

	poll.Eventually(t, ctx, 2*time.Minute, "the PodGroup of PyTorchJob mnist, minMember 3, in queue default", func() (bool, string) {
		out, _ := env.kubectl(ctx, "get", "podgroup", "mnist", "-o", "jsonpath={.spec.minMember} {.spec.queue}")
		return out == "3 default", out
	})
	poll.Eventually(t, ctx, 90*time.Second, "the three pods of PyTorchJob mnist bound and its PodGroup Running", func() (bool, string) {
		pods := kubectl("get", "pods", "-l", "training.kubeflow.org/job-name=mnist", "-o",
			`jsonpath={range .items[*]}{.metadata.name} {.spec.schedulerName} {.metadata.annotations.scheduling\.k8s\.io/group-name} {.spec.nodeName}{"\n"}{end}`)
		bound := 0
		for _, l := range strings.Split(strings.TrimSpace(pods), "\n") {
			f := strings.Fields(l)
			if len(f) == 4 && f[1] == "volcano" && f[2] == "mnist" {
				bound++
			}
		}
		phase := kubectl("get", "podgroup", "mnist", "-o", "jsonpath={.status.phase}")
		return bound == 3 && phase == "Running", fmt.Sprintf("phase %s, pods (name scheduler group node):\n%s", phase, pods)
	})

	// Too large: never admitted, so the operator makes no pod of it.
	var reason string
	poll.Eventually(t, ctx, 90*time.Second, "the PodGroup of PyTorchJob too-large Pending, saying why", func() (bool, string) {
		out, _ := env.kubectl(ctx, "get", "podgroup", "too-large", "-o",
			`jsonpath={.status.phase}|{range .status.conditions[?(@.type=="Unschedulable")]}{.status} {.reason}: {.message}{end}`)
		phase, cond, _ := strings.Cut(out, "|")
		reason = cond
		return phase == "Pending" && strings.HasPrefix(cond, "True ") && strings.Contains(cond, "cpu"), out
	})
	t.Logf("PyTorchJob too-large: %s", reason)
	if out := kubectl("get", "pods", "-l", "training.kubeflow.org/job-name=too-large", "-o", "name"); out != "" {
		t.Errorf("pods of PyTorchJob too-large made before its PodGroup was admitted: %q", out)
	}
}

// freePort is a loopback port nothing listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
