package perf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/deploy"
	"github.com/caldera-sh/caldera/pkg/controlplane"
)

// runnerUserAgent tells the benchmark's own requests apart in the audit log.
const runnerUserAgent = "caldera-perf"

// auditPolicy records one Metadata entry per completed write. Reads are not
// recorded: the benchmark counts what a scheduler writes.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

// kwokPodStageParallelism is how many pod status writes kwok makes at
// once: with kwok's default, 4, pods of a 10,000-pod backlog started up to
// 130 s after their binds.
const kwokPodStageParallelism = 32

// apiServerArgs are the same for every scheduler. Priority and fairness is
// off and the in-flight limits are high so that the API server queues no
// scheduler's requests behind the benchmark's own; the audit log is written
// synchronously so that it is complete when a scheduler has stopped.
func apiServerArgs(dir string) []string {
	return []string{
		"--audit-policy-file=" + filepath.Join(dir, "audit-policy.yaml"),
		"--audit-log-path=" + filepath.Join(dir, "audit.log"),
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		"--audit-log-maxsize=0",
		"--max-requests-inflight=2000",
		"--max-mutating-requests-inflight=1000",
		"--enable-priority-and-fairness=false",
		// /debug/pprof, to see where the API server's time goes.
		"--profiling=true",
	}
}

// Environment is the control plane one workload runs on: etcd, a
// kube-apiserver that audits writes, kwok, the CRDs, the root and default
// queues, and the workload's nodes.
type Environment struct {
	Dir    string
	BinDir string
	// AuditLog is the API server's audit log.
	AuditLog string
	// Client is an administrator's client (PodGroups, queues).
	Client client.Client
	// Clientset is an administrator's clientset speaking protobuf (pods).
	Clientset kubernetes.Interface
	// Scheme has every Caldera type.
	Scheme  *runtime.Scheme
	etcd    *controlplane.Etcd
	cluster *controlplane.Cluster
	restCfg *rest.Config
}

// StartEnvironment starts the control plane in dir and creates the nodes of
// the workload's size. Call Stop also on error paths of the caller.
func StartEnvironment(ctx context.Context, binDir, dir string, w *Workload, size string) (_ *Environment, err error) {
	env := &Environment{Dir: dir, BinDir: binDir, AuditLog: filepath.Join(dir, "integration", "audit.log")}
	defer func() {
		if err != nil {
			err = errors.Join(err, env.Stop())
		}
	}()
	if env.Scheme, err = scheme.New(); err != nil {
		return nil, err
	}
	crds, err := controlplane.ReadCRDs(deploy.CRDs, deploy.CRDDir)
	if err != nil {
		return nil, err
	}
	clusterDir := filepath.Join(dir, "integration")
	if err := os.MkdirAll(clusterDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(clusterDir, "audit-policy.yaml"), []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	if env.etcd, err = controlplane.StartEtcd(ctx, controlplane.EtcdOptions{BinDir: binDir, Dir: dir}); err != nil {
		return nil, err
	}
	env.cluster, err = controlplane.StartCluster(ctx, env.etcd, controlplane.ClusterOptions{
		Name:   "integration",
		BinDir: binDir,
		Dir:    clusterDir,
		Kwok:   true,
		// Pods start about as soon as they are bound, as on as many
		// kubelets, not minutes later in kwok's queue.
		KwokPodStageParallelism: kwokPodStageParallelism,
		CRDs:                    crds,
		Scheme:                  env.Scheme,
		APIServerArgs:           apiServerArgs(clusterDir),
	})
	if err != nil {
		return nil, err
	}
	env.restCfg = env.cluster.RESTConfig()
	env.restCfg.UserAgent = runnerUserAgent
	if env.Client, err = client.New(env.restCfg, client.Options{Scheme: env.Scheme}); err != nil {
		return nil, err
	}
	pb := rest.CopyConfig(env.restCfg)
	pb.ContentType = runtime.ContentTypeProtobuf
	if env.Clientset, err = kubernetes.NewForConfig(pb); err != nil {
		return nil, err
	}
	if err := createQueues(ctx, env.Client); err != nil {
		return nil, err
	}
	specs := nodeSpecs(w, size)
	if err := controlplane.CreateNodesBulk(ctx, env.Client, specs, creationWorkers); err != nil {
		return nil, err
	}
	if d := w.Devices; d != nil && d.Kind == DeviceDRA {
		names := make([]string, len(specs))
		for i, s := range specs {
			names[i] = s.Name
		}
		if err := publishDevices(ctx, env, names, d.PerNode); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// Kubeconfig is the path of an administrator's kubeconfig; the schedulers
// use it.
func (e *Environment) Kubeconfig() string { return e.cluster.APIServer.Kubeconfig }

// Stop stops every process the environment started.
func (e *Environment) Stop() error {
	if e == nil {
		return nil
	}
	return errors.Join(e.cluster.Stop(), e.etcd.Stop())
}

// apiServerPID is the API server's process id, for its CPU time.
func (e *Environment) apiServerPID() int { return e.cluster.APIServer.PID() }

func nodeSpecs(w *Workload, size string) []controlplane.NodeSpec {
	n := w.Sizes[size].Nodes
	specs := make([]controlplane.NodeSpec, n)
	for i := range n {
		specs[i] = controlplane.NodeSpec{
			Name: fmt.Sprintf("node-%05d", i),
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:    w.Nodes.CPU,
				corev1.ResourceMemory: w.Nodes.Memory,
				corev1.ResourcePods:   *resource.NewQuantity(int64(w.Nodes.Pods), resource.DecimalSI),
			},
		}
		if w.Devices != nil {
			w.Devices.node(&specs[i])
		}
	}
	return specs
}

// createQueues creates the root and default queues, as a Volcano cluster
// has them.
func createQueues(ctx context.Context, c client.Client) error {
	for _, name := range []string{schedulingv1beta1.RootQueue, schedulingv1beta1.DefaultQueue} {
		q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}
		schedulingv1beta1.SetDefaults_Queue(q)
		if err := c.Create(ctx, q); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating queue %s: %w", name, err)
		}
	}
	return nil
}

// apiServerPprof is the API server's pprof endpoint, asked as an
// administrator.
func (e *Environment) apiServerPprof() (pprofSource, error) {
	c, err := rest.HTTPClientFor(e.restCfg)
	if err != nil {
		return pprofSource{}, err
	}
	return pprofSource{base: e.restCfg.Host, client: c}, nil
}
