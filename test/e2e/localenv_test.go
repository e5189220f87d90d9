//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/caldera-sh/caldera/pkg/controlplane"
)

// localEnv is a running `calderactl local up`: what `make run` starts.
type localEnv struct {
	binDir, dir, kubeconfig, calderactl string
	cmd                                 *exec.Cmd
	// exited is closed when local up's output ends.
	exited chan struct{}
	mu     sync.Mutex
	log    strings.Builder
}

// startLocal starts local up in a temporary directory and waits until it
// says it is up. The caller stops it (local down) or lets the context end
// it.
func startLocal(ctx context.Context, t *testing.T) *localEnv {
	t.Helper()
	binDir, err := controlplane.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	e := &localEnv{binDir: binDir, dir: t.TempDir(), calderactl: filepath.Join(binDir, "calderactl"), exited: make(chan struct{})}
	if _, err := os.Stat(e.calderactl); err != nil {
		t.Fatalf("%v (make test-e2e builds it)", err)
	}
	e.kubeconfig = filepath.Join(e.dir, "kubeconfig")
	e.cmd = exec.CommandContext(ctx, e.calderactl, "local", "up", "--bin-dir", binDir, "--dir", e.dir)
	stdout, err := e.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	e.cmd.Stderr = e.cmd.Stdout
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	up := make(chan struct{})
	go func() {
		defer close(e.exited)
		s := bufio.NewScanner(stdout)
		closed := false
		for s.Scan() {
			e.mu.Lock()
			e.log.WriteString(s.Text() + "\n")
			e.mu.Unlock()
			if !closed && strings.Contains(s.Text(), "Stop it with Ctrl-C") {
				close(up)
				closed = true
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case <-up:
	case <-e.exited:
		t.Fatalf("local up exited before coming up:\n%s", e.logText())
	case <-ctx.Done():
		t.Fatalf("local up did not come up:\n%s", e.logText())
	}
	return e
}

func (e *localEnv) logText() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.log.String()
}

// kubectl runs kubectl on the environment and returns its combined output.
func (e *localEnv) kubectl(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(e.binDir, "kubectl"), append([]string{"--kubeconfig", e.kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

// down stops the environment as Ctrl-C does and waits for it to exit.
func (e *localEnv) down(ctx context.Context, t *testing.T) {
	t.Helper()
	if out, err := exec.CommandContext(ctx, e.calderactl, "local", "down", "--dir", e.dir).CombinedOutput(); err != nil {
		t.Errorf("local down: %v\n%s", err, out)
	}
	<-e.exited
	if err := e.cmd.Wait(); err != nil {
		t.Errorf("local up exited with %v:\n%s", err, e.logText())
	}
}
