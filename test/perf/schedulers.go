package perf

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/caldera-sh/caldera/pkg/controlplane"
)

// Scheduler names the schedulers the benchmark compares.
const (
	Caldera = "caldera"
	Kube    = "kube"
)

// ClientLimits are the client-side rate limits every scheduler gets, so that
// neither is held back by its own limiter more than the other.
type ClientLimits struct {
	QPS   float32 `json:"qps"`
	Burst int32   `json:"burst"`
}

// schedulerProcess is a scheduler running as a process.
type schedulerProcess interface {
	PID() int
	Stop() error
}

// schedulerSpec says how to run one scheduler and recognise its pods and
// requests.
type schedulerSpec struct {
	Name string
	// PodSchedulerName is the spec.schedulerName of the pods it serves.
	PodSchedulerName string
	// UserAgent is the prefix of the user agent of its API requests.
	UserAgent string
	start     func(ctx context.Context, env *Environment, dir string, o startOptions) (schedulerProcess, error)
}

type startOptions struct {
	Limits ClientLimits
	// Actions, when set, replaces the default actions.
	Actions []string
	// ProfileAddr, when set, is where caldera-scheduler serves pprof.
	ProfileAddr string
	// Tiers, when set, is caldera-scheduler's tiers (YAML).
	Tiers string
}

// Schedulers returns the schedulers by name.
func Schedulers() map[string]schedulerSpec {
	return map[string]schedulerSpec{
		Caldera: {Name: Caldera, PodSchedulerName: "volcano", UserAgent: "caldera-scheduler", start: startCaldera},
		// kube-scheduler's user agent is "kube-scheduler/<version> (...)",
		// its event client's the same with "/scheduler" appended.
		Kube: {Name: Kube, PodSchedulerName: "default-scheduler", UserAgent: "kube-scheduler", start: startKube},
	}
}

// calderaConfig is caldera-scheduler's default configuration with only what
// a benchmark must set: the cluster, the client limits, no leader election,
// and loopback endpoints.
const calderaConfig = `apiVersion: scheduler.config.caldera.sh/v1alpha1
kind: SchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: %v
  burst: %d
leaderElection:
  leaderElect: false
healthzBindAddress: %s
metricsBindAddress: %s
enableProfiling: %t
%s`

func startCaldera(ctx context.Context, env *Environment, dir string, o startOptions) (schedulerProcess, error) {
	addr := o.ProfileAddr
	if addr == "" {
		port, err := controlplane.FreePort()
		if err != nil {
			return nil, err
		}
		addr = fmt.Sprintf("127.0.0.1:%d", port)
	}
	cfgPath := filepath.Join(dir, "caldera-scheduler.yaml")
	actions := ""
	if len(o.Actions) > 0 {
		actions = fmt.Sprintf("actions: [%s]\n", strings.Join(o.Actions, ", "))
	}
	cfg := fmt.Sprintf(calderaConfig, env.Kubeconfig(), o.Limits.QPS, o.Limits.Burst, addr, addr, o.ProfileAddr != "", actions+o.Tiers)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	c, err := controlplane.StartComponent(ctx, controlplane.ComponentOptions{
		Name:   "caldera-scheduler",
		Binary: filepath.Join(env.BinDir, "caldera-scheduler"),
		// One plain loopback listener for health and the CPU profiles the
		// harness fetches; a cluster's scheduler serves metrics over HTTPS.
		Args:     []string{"--config=" + cfgPath, "--metrics-secure=false"},
		Dir:      dir,
		ReadyURL: "http://" + addr + "/readyz",
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func startKube(ctx context.Context, env *Environment, dir string, o startOptions) (schedulerProcess, error) {
	k, err := controlplane.StartKubeScheduler(ctx, env.cluster.APIServer, controlplane.KubeSchedulerOptions{
		BinDir: env.BinDir,
		Dir:    dir,
		ExtraArgs: []string{
			fmt.Sprintf("--kube-api-qps=%v", o.Limits.QPS),
			fmt.Sprintf("--kube-api-burst=%d", o.Limits.Burst),
		},
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}
