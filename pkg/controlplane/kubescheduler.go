package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// KubeSchedulerOptions configure a kube-scheduler.
type KubeSchedulerOptions struct {
	// BinDir holds the kube-scheduler binary.
	BinDir string
	// Dir holds the serving certificate and the log.
	Dir string
	// Port is the secure port of /readyz and /metrics; 0 picks a free one.
	Port int
	// ExtraArgs are appended to the command line (later flags win).
	ExtraArgs []string
	// StartTimeout bounds the wait for /readyz; 0 means 60s.
	StartTimeout time.Duration
}

// KubeScheduler is a running kube-scheduler with its default profile
// (scheduler name default-scheduler), without leader election. Tests run it
// to compare Caldera's decisions with kube-scheduler's on the same cluster.
type KubeScheduler struct {
	// URL is the https URL of its secure port.
	URL  string
	proc *process
}

// StartKubeScheduler starts kube-scheduler against the API server and waits
// until /readyz answers ok, that is, until its informers have synced.
func StartKubeScheduler(ctx context.Context, s *APIServer, o KubeSchedulerOptions) (*KubeScheduler, error) {
	return onFreePorts(func() (*KubeScheduler, error) { return startKubeScheduler(ctx, s, o) })
}

func startKubeScheduler(ctx context.Context, s *APIServer, o KubeSchedulerOptions) (*KubeScheduler, error) {
	bin, err := findBinary(o.BinDir, "kube-scheduler")
	if err != nil {
		return nil, err
	}
	port, err := portOrFree(o.Port)
	if err != nil {
		return nil, err
	}
	args := []string{
		"--kubeconfig=" + s.Kubeconfig,
		// Delegated authentication and authorization of the secure port;
		// /readyz is always allowed.
		"--authentication-kubeconfig=" + s.Kubeconfig,
		"--authorization-kubeconfig=" + s.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + filepath.Join(o.Dir, "kube-scheduler-certs"),
	}
	args = append(args, o.ExtraArgs...)
	p, err := startProcess("kube-scheduler-"+s.Name, bin, args, o.Dir)
	if err != nil {
		return nil, err
	}
	ks := &KubeScheduler{URL: "https://" + hostPort(port), proc: p}

	if err := waitHealthy(ctx, p, "kube-scheduler", ks.URL+"/readyz", o.StartTimeout); err != nil {
		return nil, err
	}
	return ks, nil
}

// Stop stops kube-scheduler.
func (k *KubeScheduler) Stop() error {
	if k == nil {
		return nil
	}
	return k.proc.stop()
}
