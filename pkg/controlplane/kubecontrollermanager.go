package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultKubeControllers are the kube-controller-manager controllers tests
// usually need: workloads that create pods (Deployment, ReplicaSet,
// StatefulSet, DaemonSet, Job) and the garbage collector that deletes what
// their owners leave behind.
var DefaultKubeControllers = []string{"deployment", "replicaset", "statefulset", "daemonset", "job", "garbagecollector"}

// KubeControllerManagerOptions configure a kube-controller-manager.
type KubeControllerManagerOptions struct {
	// BinDir holds the kube-controller-manager binary.
	BinDir string
	// Dir holds the serving certificate and the log.
	Dir string
	// Port is the secure port of /healthz and /metrics; 0 picks a free one.
	Port int
	// Controllers to run; empty means DefaultKubeControllers.
	Controllers []string
	// ServiceAccountKeyFile signs service account tokens; empty means the
	// API server's sa.key next to its kubeconfig, when it exists.
	ServiceAccountKeyFile string
	// ExtraArgs are appended to the command line (later flags win).
	ExtraArgs []string
	// StartTimeout bounds the wait for /healthz; 0 means 60s.
	StartTimeout time.Duration
}

// KubeControllerManager is a running kube-controller-manager without leader
// election, acting with the API server's administrator credentials (no
// per-controller service accounts).
type KubeControllerManager struct {
	// URL is the https URL of its secure port.
	URL  string
	proc *process
}

// StartKubeControllerManager starts kube-controller-manager against the API
// server and waits until /healthz answers ok.
func StartKubeControllerManager(ctx context.Context, s *APIServer, o KubeControllerManagerOptions) (*KubeControllerManager, error) {
	return onFreePorts(func() (*KubeControllerManager, error) { return startKubeControllerManager(ctx, s, o) })
}

func startKubeControllerManager(ctx context.Context, s *APIServer, o KubeControllerManagerOptions) (*KubeControllerManager, error) {
	bin, err := findBinary(o.BinDir, "kube-controller-manager")
	if err != nil {
		return nil, err
	}
	port, err := portOrFree(o.Port)
	if err != nil {
		return nil, err
	}
	controllers := o.Controllers
	if len(controllers) == 0 {
		controllers = DefaultKubeControllers
	}
	keyFile := o.ServiceAccountKeyFile
	if keyFile == "" {
		// StartAPIServer writes its keys next to its kubeconfig.
		k := filepath.Join(filepath.Dir(s.Kubeconfig), "sa.key")
		if _, err := os.Stat(k); err == nil {
			keyFile = k
		}
	}
	args := []string{
		"--kubeconfig=" + s.Kubeconfig,
		"--authentication-kubeconfig=" + s.Kubeconfig,
		"--authorization-kubeconfig=" + s.Kubeconfig,
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--controllers=" + strings.Join(controllers, ","),
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + filepath.Join(o.Dir, "kube-controller-manager-certs"),
	}
	if keyFile != "" {
		args = append(args, "--service-account-private-key-file="+keyFile)
	}
	args = append(args, o.ExtraArgs...)
	p, err := startProcess("kube-controller-manager-"+s.Name, bin, args, o.Dir)
	if err != nil {
		return nil, err
	}
	k := &KubeControllerManager{URL: "https://" + hostPort(port), proc: p}

	if err := waitHealthy(ctx, p, "kube-controller-manager", k.URL+"/healthz", o.StartTimeout); err != nil {
		return nil, err
	}
	return k, nil
}

// Stop stops kube-controller-manager.
func (k *KubeControllerManager) Stop() error {
	if k == nil {
		return nil
	}
	return k.proc.stop()
}
