package controlplane

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// KwokNodeAnnotation marks a node as simulated; the kwok started here manages
// exactly the nodes that carry it with the value "fake".
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// HoldNotReadyAnnotation on a simulated node keeps a Ready condition set to
// False or Unknown as it is until the annotation is removed; without it
// kwok makes the node Ready again at once.
const HoldNotReadyAnnotation = "caldera.sh/hold-not-ready"

//go:embed kwokstages/*.yaml
var kwokStages embed.FS

// KwokOptions configure a kwok instance.
type KwokOptions struct {
	// BinDir holds the kwok binary.
	BinDir string
	// Dir holds the stage configuration and the log.
	Dir string
	// PodCIDR is the pool of pod IPs; empty means 10.244.0.0/16.
	PodCIDR string
	// PodStageParallelism is how many pod stages (a pod started, finished,
	// deleted: each a status write) kwok plays at once for all its nodes;
	// 0 keeps kwok's default, 4. Where thousands of pods start together, 4
	// writes at a time start them minutes after their binds, when the
	// kubelets of as many nodes would start them at once.
	PodStageParallelism uint
}

// Kwok is a running kwok that simulates the nodes annotated with
// KwokNodeAnnotation=fake and the pods bound to them. See the kwokstages
// folder for the lifecycle it gives pods (run durations and exit codes are
// set per pod by annotation); a pod deleted on those nodes is deleted for
// good by the terminator beside it.
type Kwok struct {
	proc *process
	// stopTerminator stops the terminator, which deletes for good the
	// pods being deleted on the simulated nodes (terminator.go).
	stopTerminator context.CancelFunc
}

// StartKwok starts kwok against the API server.
func StartKwok(ctx context.Context, s *APIServer, o KwokOptions) (*Kwok, error) {
	bin, err := findBinary(o.BinDir, "kwok")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	stagesPath := filepath.Join(o.Dir, "kwok-stages.yaml")
	if err := writeStages(stagesPath, o.PodStageParallelism); err != nil {
		return nil, err
	}
	cidr := o.PodCIDR
	if cidr == "" {
		cidr = "10.244.0.0/16"
	}
	args := []string{
		"--kubeconfig=" + s.Kubeconfig,
		"--config=" + stagesPath,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=fake",
		"--cidr=" + cidr,
		"--node-ip=10.0.0.1",
		"--node-lease-duration-seconds=40",
	}
	p, err := startProcess("kwok-"+s.Name, bin, args, o.Dir)
	if err != nil {
		return nil, err
	}
	// kwok has no readiness endpoint unless it serves; give it a moment to
	// fail on bad configuration so that the error surfaces here.
	select {
	case <-p.done:
		return nil, p.failure(p.waitErr)
	case <-time.After(300 * time.Millisecond):
	case <-ctx.Done():
		_ = p.stop()
		return nil, context.Cause(ctx)
	}
	tctx, stop := context.WithCancel(context.Background())
	if err := startTerminator(tctx, s.RESTConfig()); err != nil {
		stop()
		_ = p.stop()
		return nil, fmt.Errorf("starting the pod terminator: %w", err)
	}
	return &Kwok{proc: p, stopTerminator: stop}, nil
}

// Stop stops kwok.
func (k *Kwok) Stop() error {
	if k == nil {
		return nil
	}
	k.stopTerminator()
	return k.proc.stop()
}

func writeStages(path string, podParallelism uint) error {
	entries, err := kwokStages.ReadDir("kwokstages")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if podParallelism > 0 {
		// A configuration given replaces kwok's defaults whole: the rest
		// are kwok's own defaults.
		fmt.Fprintf(&buf, `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: %d
  nodePlayStageParallelism: 4
  nodeLeaseParallelism: 4
  podsOnNodeSyncParallelism: 1
  enablePodsOnNodeSyncListPager: true
  enablePodsOnNodeSyncStreamWatch: false
  manageAllNodes: false
`, podParallelism)
	}
	for _, e := range entries {
		b, err := kwokStages.ReadFile("kwokstages/" + e.Name())
		if err != nil {
			return err
		}
		if buf.Len() > 0 {
			buf.WriteString("\n---\n")
		}
		buf.Write(b)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing kwok stages: %w", err)
	}
	return nil
}
