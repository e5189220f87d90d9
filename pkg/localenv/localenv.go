// Package localenv runs a complete local Caldera environment on loopback:
// etcd, a kube-apiserver with every Caldera CRD, kube-controller-manager with
// the controllers a cluster has (garbage collection, namespaces,
// Deployments, StatefulSets, ...), kwok with a realistic set of simulated
// GPU and CPU nodes, and the default queues; each Caldera component runs
// as its service account with the roles of deploy/member/rbac.yaml. It is
// what `calderactl local up` (and `make run`) starts.
package localenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/deploy"
	"github.com/caldera-sh/caldera/pkg/agent/config"
	"github.com/caldera-sh/caldera/pkg/controlplane"
)

// Options configure the environment.
type Options struct {
	// BinDir holds the control-plane binaries.
	BinDir string
	// Dir holds the environment's state: kubeconfig, logs, etcd data. It is
	// emptied on start.
	Dir string
	// Nodes are the simulated nodes; nil means DefaultNodes().
	Nodes []controlplane.NodeSpec
	// Progress receives one line per step.
	Progress func(format string, args ...any)
	// Demo submits a demo Volcano Job once everything runs.
	Demo bool
	// Components are started (from BinDir) once the cluster is up; nil
	// means all of them.
	Components []string
	// SchedulerConfig is caldera-scheduler's configuration; "" means
	// SchedulerConfig.
	SchedulerConfig string
	// Verbosity is the Caldera components' log level (-v); 0 is their
	// default.
	Verbosity int
}

// Components Start can run.
const (
	// ComponentKubeControllerManager runs Kubernetes' own controllers, so
	// that deleting a Job takes its pods and objects with it, Deployments
	// and StatefulSets get pods, and namespaces go away.
	ComponentKubeControllerManager = "kube-controller-manager"
	// ComponentKubeScheduler runs kube-scheduler as the cluster's default
	// scheduler, for pods that name no scheduler (schedulerName
	// default-scheduler), as every cluster has.
	ComponentKubeScheduler     = "kube-scheduler"
	ComponentWebhook           = "caldera-webhook"
	ComponentScheduler         = "caldera-scheduler"
	ComponentControllerManager = "caldera-controller-manager"
	// ComponentAgent runs caldera-agent for every node labelled
	// volcano.sh/colocation=true, each reading a simulated node: a cgroup
	// tree and meminfo of its own under the environment's directory, idle.
	ComponentAgent = "caldera-agent"
)

// AllComponents lists every component, in start order: Kubernetes' own
// controllers, then admission, so that everything the others create passes
// through it.
func AllComponents() []string {
	return []string{ComponentKubeControllerManager, ComponentKubeScheduler, ComponentWebhook, ComponentScheduler, ComponentControllerManager, ComponentAgent}
}

// KubeControllers are the kube-controller-manager controllers the local
// environment runs: every one a cluster runs by default.
var KubeControllers = []string{"*"}

// SchedulerConfig is the local environment's scheduler configuration:
// Volcano's default tiers with cooldown protection, network topology,
// GPU sharing by card (the H100 nodes offer volcano.sh/gpu-memory and
// gpu-number), devices allocated to ResourceClaims (DRADriver publishes
// the A100 nodes' GPUs), and preemption and reclaim besides placement.
const SchedulerConfig = `actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: cdp
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: deviceshare
    arguments:
      deviceshare.GPUSharingEnable: true
      deviceshare.GPUNumberEnable: true
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
`

// HyperNodeDiscovery is the local environment's HyperNode discovery: the
// simulated nodes' spine and leaf labels make the network topology.
const HyperNodeDiscovery = `networkTopologyDiscovery:
- source: label
  enabled: true
  config:
    networkTopologyTypes:
      fabric:
      - nodeLabel: ` + SpineLabel + `
        tierName: spine
      - nodeLabel: ` + LeafLabel + `
        tierName: leaf
      - nodeLabel: kubernetes.io/hostname
`

// Environment is a running local environment.
type Environment struct {
	Dir        string
	Kubeconfig string
	Nodes      []controlplane.NodeSpec
	// ExplainURL is where the scheduler serves what keeps each pending job
	// from being placed; "" when the scheduler is not started. Like every
	// metrics endpoint it is HTTPS and answers a bearer token of
	// MetricsReader (see MetricsToken).
	ExplainURL string
	// MetricsURLs are the components' metrics endpoints (HTTPS), by
	// component name (an agent's is caldera-agent-<node>).
	MetricsURLs map[string]string
	etcd        *controlplane.Etcd
	cluster     *controlplane.Cluster
	kcm         *controlplane.KubeControllerManager
	ks          *controlplane.KubeScheduler
	components  []*controlplane.Component
	byName      map[string]*controlplane.Component
	lockPath    string
	// schedulerConfig and verbosity are the Options'.
	schedulerConfig string
	verbosity       int
	// usageDir receives the audit log's summary on Stop (UsageDirEnv).
	usageDir string
}

// Start brings the environment up. On error everything started is stopped.
func Start(ctx context.Context, o Options) (_ *Environment, err error) {
	progress := o.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	if o.Nodes == nil {
		o.Nodes = DefaultNodes()
	}
	env := &Environment{Dir: o.Dir, Nodes: o.Nodes, lockPath: filepath.Join(o.Dir, "pid"), byName: map[string]*controlplane.Component{}, MetricsURLs: map[string]string{},
		schedulerConfig: o.SchedulerConfig, verbosity: o.Verbosity}
	if err := env.lock(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = env.Stop()
		}
	}()
	for _, sub := range []string{"etcd-data", "local", "audit"} {
		if err := os.RemoveAll(filepath.Join(o.Dir, sub)); err != nil {
			return nil, err
		}
	}

	step := func(what string, f func() error) error {
		start := time.Now()
		progress("%s ...", what)
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		progress("%s: done in %s", what, time.Since(start).Round(10*time.Millisecond))
		return nil
	}
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	crds, err := controlplane.ReadCRDs(deploy.CRDs, deploy.CRDDir)
	if err != nil {
		return nil, err
	}
	if err := step("starting etcd", func() (err error) {
		env.etcd, err = controlplane.StartEtcd(ctx, controlplane.EtcdOptions{BinDir: o.BinDir, Dir: o.Dir})
		return err
	}); err != nil {
		return nil, err
	}
	var apiserverArgs []string
	if d := os.Getenv(UsageDirEnv); d != "" {
		auditDir := filepath.Join(o.Dir, "audit")
		if err := os.MkdirAll(auditDir, 0o755); err != nil {
			return nil, err
		}
		if apiserverArgs, err = AuditArgs(auditDir, nil, []string{"system:serviceaccounts:" + SystemNamespace}); err != nil {
			return nil, err
		}
		env.usageDir = d
	}
	if err := step(fmt.Sprintf("starting kube-apiserver and kwok, installing %d CRDs", len(crds)), func() (err error) {
		env.cluster, err = controlplane.StartCluster(ctx, env.etcd, controlplane.ClusterOptions{
			Name: "local", BinDir: o.BinDir, Dir: filepath.Join(o.Dir, "local"), Kwok: true, CRDs: crds, Scheme: s,
			APIServerArgs: apiserverArgs,
		})
		return err
	}); err != nil {
		return nil, err
	}
	env.Kubeconfig = KubeconfigPath(o.Dir)
	if err := copyFile(env.cluster.APIServer.Kubeconfig, env.Kubeconfig); err != nil {
		return nil, err
	}
	if err := step(fmt.Sprintf("creating %d simulated nodes", len(o.Nodes)), func() error {
		return controlplane.CreateNodes(ctx, env.cluster.Client, o.Nodes)
	}); err != nil {
		return nil, err
	}
	if err := step("publishing the example DRA driver's GPUs", func() error {
		return publishDRADevices(ctx, env.cluster.Client, o.Nodes)
	}); err != nil {
		return nil, err
	}
	if err := step(fmt.Sprintf("creating %d persistent volumes", LocalVolumes), func() error {
		return createVolumes(ctx, env.cluster.Client)
	}); err != nil {
		return nil, err
	}
	if err := step("creating the default queues", func() error {
		return createDefaultQueues(ctx, env.cluster.Client)
	}); err != nil {
		return nil, err
	}
	if err := step("creating the components' service accounts and RBAC (deploy/member/rbac.yaml)", func() error {
		return installIdentities(ctx, env.cluster.Client)
	}); err != nil {
		return nil, err
	}
	components := o.Components
	if components == nil {
		components = AllComponents()
	}
	if slices.Contains(components, ComponentKubeControllerManager) {
		if err := step("starting kube-controller-manager", func() (err error) {
			env.kcm, err = controlplane.StartKubeControllerManager(ctx, env.cluster.APIServer, controlplane.KubeControllerManagerOptions{
				BinDir: o.BinDir, Dir: o.Dir, Controllers: KubeControllers,
			})
			return err
		}); err != nil {
			return nil, err
		}
	}
	if slices.Contains(components, ComponentKubeScheduler) {
		if err := step("starting kube-scheduler (the default scheduler)", func() (err error) {
			env.ks, err = controlplane.StartKubeScheduler(ctx, env.cluster.APIServer, controlplane.KubeSchedulerOptions{BinDir: o.BinDir, Dir: o.Dir})
			return err
		}); err != nil {
			return nil, err
		}
	}
	for _, name := range components {
		if name == ComponentAgent || name == ComponentKubeControllerManager || name == ComponentKubeScheduler {
			continue
		}
		if err := step("starting "+name, func() error { return env.startComponent(ctx, o.BinDir, name) }); err != nil {
			return nil, err
		}
	}
	if slices.Contains(components, ComponentAgent) {
		var nodes []controlplane.NodeSpec
		for _, n := range o.Nodes {
			if n.Labels[config.ColocationLabel] == "true" {
				nodes = append(nodes, n)
			}
		}
		if err := step(fmt.Sprintf("starting caldera-agent on %d colocation nodes", len(nodes)), func() error {
			if err := colocationConfig(ctx, env.cluster.Client); err != nil {
				return err
			}
			for _, n := range nodes {
				if err := env.startAgent(ctx, o.BinDir, n); err != nil {
					return fmt.Errorf("on %s: %w", n.Name, err)
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if o.Demo {
		if err := step("submitting the demo job", func() error { return submitDemo(ctx, env.cluster.Client) }); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// AgentNamespace holds the agents' colocation ConfigMap.
const AgentNamespace = SystemNamespace

// startAgent runs caldera-agent for a simulated node, on a cgroup tree and
// meminfo written for it: an idle node of its capacity.
func (e *Environment) startAgent(ctx context.Context, binDir string, n controlplane.NodeSpec) error {
	root := filepath.Join(e.Dir, "agent", n.Name)
	cgroupRoot := filepath.Join(root, "cgroup")
	if err := os.MkdirAll(cgroupRoot, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cgroupRoot, "cpu.stat"), []byte("usage_usec 0\nuser_usec 0\nsystem_usec 0\n"), 0o644); err != nil {
		return err
	}
	mem := n.Capacity.Memory().Value() / 1024
	meminfo := filepath.Join(root, "meminfo")
	if err := os.WriteFile(meminfo, []byte(fmt.Sprintf("MemTotal: %d kB\nMemFree: %d kB\nMemAvailable: %d kB\n", mem, mem, mem)), 0o644); err != nil {
		return err
	}
	port, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	healthPort, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	health := fmt.Sprintf("127.0.0.1:%d", healthPort)
	kubeconfig, err := e.kubeconfigOf(ctx, ComponentAgent)
	if err != nil {
		return err
	}
	c, err := controlplane.StartComponent(ctx, controlplane.ComponentOptions{
		Name:   "caldera-agent-" + n.Name,
		Binary: filepath.Join(binDir, ComponentAgent),
		Args: []string{
			"--kubeconfig=" + kubeconfig, fmt.Sprintf("-v=%d", e.verbosity),
			"--node-name=" + n.Name,
			"--namespace=" + AgentNamespace,
			"--cgroup-root=" + cgroupRoot,
			"--cgroup-driver=cgroupfs",
			"--meminfo=" + meminfo,
			"--metrics-bind-address=" + addr,
			"--health-probe-bind-address=" + health,
		},
		Dir:      e.Dir,
		ReadyURL: "http://" + health + "/healthz",
	})
	if err != nil {
		return err
	}
	e.add(c)
	e.MetricsURLs[c.Name()] = "https://" + addr + "/metrics"
	return nil
}

func (e *Environment) startComponent(ctx context.Context, binDir, name string) error {
	port, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	health := fmt.Sprintf("127.0.0.1:%d", port)
	if port, err = controlplane.FreePort(); err != nil {
		return err
	}
	metrics := fmt.Sprintf("127.0.0.1:%d", port)
	kubeconfig, err := e.kubeconfigOf(ctx, name)
	if err != nil {
		return err
	}
	var args []string
	switch name {
	case ComponentWebhook:
		port, err := controlplane.FreePort()
		if err != nil {
			return err
		}
		args = []string{
			"--kubeconfig=" + kubeconfig, fmt.Sprintf("-v=%d", e.verbosity),
			"--bind-address=127.0.0.1",
			fmt.Sprintf("--port=%d", port),
			fmt.Sprintf("--url-base=https://127.0.0.1:%d", port),
			"--cert-dir=" + filepath.Join(e.Dir, "webhook-certs"),
			"--health-probe-bind-address=" + health,
			"--metrics-bind-address=" + metrics,
		}
	case ComponentScheduler:
		conf := filepath.Join(e.Dir, "scheduler.conf")
		text := e.schedulerConfig
		if text == "" {
			text = SchedulerConfig
		}
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			return fmt.Errorf("writing the scheduler's configuration: %w", err)
		}
		args = []string{
			"--kubeconfig=" + kubeconfig, fmt.Sprintf("-v=%d", e.verbosity),
			"--config=" + conf,
			"--leader-elect=false",
			"--healthz-bind-address=" + health,
			"--metrics-bind-address=" + metrics,
		}
		e.ExplainURL = "https://" + metrics + "/debug/jobs/"
	case ComponentControllerManager:
		conf := filepath.Join(e.Dir, "hypernode-discovery.conf")
		if err := os.WriteFile(conf, []byte(HyperNodeDiscovery), 0o644); err != nil {
			return fmt.Errorf("writing the HyperNode discovery configuration: %w", err)
		}
		args = []string{
			"--kubeconfig=" + kubeconfig, fmt.Sprintf("-v=%d", e.verbosity),
			"--hypernode-discovery-config=" + conf,
			"--leader-elect=false",
			"--health-probe-bind-address=" + health,
			"--metrics-bind-address=" + metrics,
		}
	default:
		return fmt.Errorf("unknown component %q", name)
	}
	c, err := controlplane.StartComponent(ctx, controlplane.ComponentOptions{
		Name:     name,
		Binary:   filepath.Join(binDir, name),
		Args:     args,
		Dir:      e.Dir,
		ReadyURL: "http://" + health + "/readyz",
	})
	if err != nil {
		return err
	}
	e.add(c)
	e.MetricsURLs[name] = "https://" + metrics + "/metrics"
	return nil
}

// add records a started component.
func (e *Environment) add(c *controlplane.Component) {
	e.components = append(e.components, c)
	e.byName[c.Name()] = c
}

// Component is the running Caldera component of that name
// (caldera-scheduler, caldera-controller-manager, caldera-webhook, or
// caldera-agent-<node> for a node's agent), nil if none runs.
func (e *Environment) Component(name string) *controlplane.Component { return e.byName[name] }

// ComponentNames lists the running Caldera components, in start order.
func (e *Environment) ComponentNames() []string {
	names := make([]string, 0, len(e.components))
	for _, c := range e.components {
		names = append(names, c.Name())
	}
	return names
}

// APIServer is the environment's API server.
func (e *Environment) APIServer() *controlplane.APIServer { return e.cluster.APIServer }

// Etcd is the environment's etcd.
func (e *Environment) Etcd() *controlplane.Etcd { return e.etcd }

// Stop stops every process the environment started and releases its lock.
func (e *Environment) Stop() error {
	if e == nil {
		return nil
	}
	var errs []error
	for i := len(e.components) - 1; i >= 0; i-- {
		errs = append(errs, e.components[i].Stop())
	}
	err := errors.Join(append(errs, e.ks.Stop(), e.kcm.Stop(), e.cluster.Stop(), e.etcd.Stop())...)
	if e.usageDir != "" && e.cluster != nil {
		if uErr := WriteUsage(filepath.Join(e.Dir, "audit"), e.usageDir); uErr != nil {
			err = errors.Join(err, fmt.Errorf("summarizing the audit log: %w", uErr))
		}
	}
	if rmErr := os.Remove(e.lockPath); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return err
}

// lock records this process as the owner of Dir, refusing when another live
// process owns it.
func (e *Environment) lock() error {
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		return err
	}
	if b, err := os.ReadFile(e.lockPath); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid != os.Getpid() && alive(pid) {
			return fmt.Errorf("a local environment is already running from %s (pid %d); stop it first", e.Dir, pid)
		}
	}
	return os.WriteFile(e.lockPath, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// LocalVolumes is how many persistent volumes the environment offers to
// claims of no storage class (kube-controller-manager binds them).
const LocalVolumes = 8

// createVolumes makes LocalVolumes volumes of 100Gi, for claims of any
// access mode: a job's volumeClaim (examples/batch/mpi-master-worker.yaml)
// binds to one, and its pods can be placed.
func createVolumes(ctx context.Context, c client.Client) error {
	for i := range LocalVolumes {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("local-pv-%d", i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadWriteMany, corev1.ReadOnlyMany},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
					Path: fmt.Sprintf("/var/lib/caldera-local/pv-%d", i),
				}},
			},
		}
		if err := c.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// createDefaultQueues creates the root and default queues, as a Volcano
// cluster has them.
func createDefaultQueues(ctx context.Context, c client.Client) error {
	for _, name := range []string{schedulingv1beta1.RootQueue, schedulingv1beta1.DefaultQueue} {
		q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}
		schedulingv1beta1.SetDefaults_Queue(q)
		if err := c.Create(ctx, q); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating queue %s: %w", name, err)
		}
	}
	return nil
}

// Running reports the process running the environment of dir, if any.
func Running(dir string) (pid int, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		return 0, false
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || !alive(pid) {
		return 0, false
	}
	return pid, true
}

// KubeconfigPath is where the environment of dir keeps its kubeconfig.
func KubeconfigPath(dir string) string {
	return filepath.Join(dir, "kubeconfig")
}
