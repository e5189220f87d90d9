package framework

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
)

// Kubectl runs the kubectl built with the control plane against the
// framework's cluster and returns its stdout and stderr.
func (f *Framework) Kubectl(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	args = append([]string{"--kubeconfig", f.Kubeconfig()}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(f.BinDir, "kubectl"), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}
