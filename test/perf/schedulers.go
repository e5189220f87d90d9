package perf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	shardv1alpha1 "github.com/caldera-sh/caldera/apis/shard/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
)

// Scheduler names the schedulers the benchmark compares.
const (
	Caldera = "caldera"
	Kube    = "kube"
	// CalderaSharded is caldera-scheduler as shardedInstances instances,
	// each in hard sharding mode on its NodeShard of an equal share of the
	// nodes, serving its own scheduler name; jobs go to the instances in
	// turn.
	CalderaSharded = "caldera-sharded"
)

// shardedInstances is how many instances CalderaSharded runs.
const shardedInstances = 2

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
	// PodSchedulerName is the spec.schedulerName of the pods it serves;
	// with PodSchedulerNames, job i's pods name PodSchedulerNames[i mod
	// len] instead.
	PodSchedulerName  string
	PodSchedulerNames []string
	// UserAgent is the prefix of the user agent of its API requests.
	UserAgent string
	// FastLaneName, when set, is the spec.schedulerName of the pods of a
	// fast-lane group (JobGroup.FastLane).
	FastLaneName string
	// Ceiling: no scheduler, the no-op binder: nodes may be overfilled,
	// and its CPU and memory are not measured.
	Ceiling bool
	start   func(ctx context.Context, env *Environment, dir string, o startOptions) (schedulerProcess, error)
}

type startOptions struct {
	Limits ClientLimits
	// Actions, when set, replaces the default actions.
	Actions []string
	// ProfileAddr, when set, is where caldera-scheduler serves pprof.
	ProfileAddr string
	// Tiers, when set, is caldera-scheduler's tiers (YAML).
	Tiers string
	// FastLane turns caldera-scheduler's fast lane on for FastLaneName.
	FastLane bool
}

// fastLaneName is the scheduler name of caldera-scheduler's fast lane in a
// benchmark.
const fastLaneName = "caldera-fast"

// schedulerNameOf is the spec.schedulerName of job j's pods.
func (s schedulerSpec) schedulerNameOf(j *job) string {
	if j.group.FastLane && s.FastLaneName != "" {
		return s.FastLaneName
	}
	return s.podSchedulerName(j.index)
}

// podSchedulerName is the spec.schedulerName of job i's pods.
func (s schedulerSpec) podSchedulerName(i int) string {
	if len(s.PodSchedulerNames) > 0 {
		return s.PodSchedulerNames[i%len(s.PodSchedulerNames)]
	}
	return s.PodSchedulerName
}

// shardName is the scheduler name, and NodeShard, of sharded instance i.
func shardName(i int) string { return fmt.Sprintf("shard-%d", i) }

// Schedulers returns the schedulers by name.
func Schedulers() map[string]schedulerSpec {
	var shards []string
	for i := range shardedInstances {
		shards = append(shards, shardName(i))
	}
	return map[string]schedulerSpec{
		Caldera:        {Name: Caldera, PodSchedulerName: "volcano", FastLaneName: fastLaneName, UserAgent: "caldera-scheduler", start: startCaldera},
		CalderaSharded: {Name: CalderaSharded, PodSchedulerNames: shards, UserAgent: "caldera-scheduler", start: startCalderaSharded},
		NoopBinder:     {Name: NoopBinder, PodSchedulerName: NoopBinder, UserAgent: "noop-binder", start: startNoop, Ceiling: true},
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
	extra := ""
	if o.FastLane {
		extra = fmt.Sprintf("fastLane:\n  schedulerNames: [%s]\n", fastLaneName)
	}
	return startCalderaWith(ctx, env, dir, o, extra)
}

// startCalderaSharded divides the nodes into shardedInstances NodeShards
// (by name, in equal runs) and starts an instance for each.
func startCalderaSharded(ctx context.Context, env *Environment, dir string, o startOptions) (schedulerProcess, error) {
	nodes, err := env.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	var procs multiProcess
	for i := range shardedInstances {
		lo, hi := i*len(names)/shardedInstances, (i+1)*len(names)/shardedInstances
		ns := &shardv1alpha1.NodeShard{ObjectMeta: metav1.ObjectMeta{Name: shardName(i)}, Spec: shardv1alpha1.NodeShardSpec{NodesDesired: names[lo:hi]}}
		if err := env.Client.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
			return nil, err
		}
		io := o
		if i > 0 {
			io.ProfileAddr = "" // the first instance's profile stands for both
		}
		idir := filepath.Join(dir, shardName(i))
		if err := os.MkdirAll(idir, 0o755); err != nil {
			return nil, err
		}
		p, err := startCalderaWith(ctx, env, idir, io, fmt.Sprintf("schedulerNames: [%s]\nsharding:\n  mode: hard\n", shardName(i)))
		if err != nil {
			_ = procs.Stop()
			return nil, err
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// multiProcess is several scheduler processes run as one scheduler.
type multiProcess []schedulerProcess

// PID is the first process's.
func (m multiProcess) PID() int { return m[0].PID() }

// PIDs are every process's.
func (m multiProcess) PIDs() []int {
	out := make([]int, len(m))
	for i, p := range m {
		out[i] = p.PID()
	}
	return out
}

func (m multiProcess) Stop() error {
	var errs []error
	for _, p := range m {
		errs = append(errs, p.Stop())
	}
	return errors.Join(errs...)
}

// schedulerUsage is the scheduler's CPU time and peak RSS, summed over
// its processes.
func schedulerUsage(p schedulerProcess) (processUsage, error) {
	if _, ok := p.(*noopProcess); ok {
		return processUsage{}, nil
	}
	pids := []int{p.PID()}
	if m, ok := p.(multiProcess); ok {
		pids = m.PIDs()
	}
	var sum processUsage
	for _, pid := range pids {
		u, err := readProcessUsage(pid)
		if err != nil {
			return sum, err
		}
		sum.CPUSeconds += u.CPUSeconds
		sum.PeakRSSBytes += u.PeakRSSBytes
	}
	return sum, nil
}

// startCalderaWith starts caldera-scheduler with extra configuration.
func startCalderaWith(ctx context.Context, env *Environment, dir string, o startOptions, extra string) (schedulerProcess, error) {
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
	cfg := fmt.Sprintf(calderaConfig, env.Kubeconfig(), o.Limits.QPS, o.Limits.Burst, addr, addr, o.ProfileAddr != "", actions+o.Tiers+extra)
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
