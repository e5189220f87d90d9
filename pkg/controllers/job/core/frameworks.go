package core

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// The job plugins of distributed frameworks: each tells a framework's
// processes where their peers are, in the environment variables, ports,
// annotations or commands the framework reads. Hosts are the svc plugin's
// names (<job>-<task>-<index>.<job>), which admission adds with them.

// addContainerEnv gives every regular container env (init containers
// are left alone).
func addContainerEnv(pod *corev1.Pod, env ...corev1.EnvVar) {
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, env...)
	}
}

// mpi: the master's pods learn the workers' hosts in MPI_HOST (comma
// separated), and every container of the job declares the port the
// launcher reaches the workers on (sshd's, by default).
type mpiPlugin struct {
	master, worker string
	port           int
}

// The mpi plugin's defaults, environment variable and port name.
const (
	MPIDefaultPort = 22
	EnvMPIHost     = "MPI_HOST"
	MPIPortName    = "mpijob-port"
)

func newMPIPlugin(args []string) (JobPlugin, error) {
	p := &mpiPlugin{}
	if err := parseFlags("mpi", args, func(fs *flag.FlagSet) {
		fs.StringVar(&p.master, "master", "master", "")
		fs.StringVar(&p.worker, "worker", "worker", "")
		fs.IntVar(&p.port, "port", MPIDefaultPort, "")
	}); err != nil {
		return nil, err
	}
	return p, checkPort("port", p.port)
}

func (p *mpiPlugin) Name() string { return "mpi" }

func (p *mpiPlugin) Check(job *batchv1alpha1.Job) string {
	if taskIndex(job, p.master) < 0 {
		return fmt.Sprintf("the master task %q is not one of the job's tasks (set --master=<task>)", p.master)
	}
	if taskIndex(job, p.worker) < 0 {
		return fmt.Sprintf("the worker task %q is not one of the job's tasks (set --worker=<task>)", p.worker)
	}
	return ""
}

func (p *mpiPlugin) MutatePod(job *batchv1alpha1.Job, pod *corev1.Pod, task string, _ int) {
	if task == p.master {
		addEnv(pod, []corev1.EnvVar{{Name: EnvMPIHost, Value: strings.Join(Hosts(job)[p.worker], ",")}})
	}
	for i := range pod.Spec.Containers {
		addPort(&pod.Spec.Containers[i], MPIPortName, p.port)
	}
	for i := range pod.Spec.InitContainers {
		addPort(&pod.Spec.InitContainers[i], MPIPortName, p.port)
	}
}

func (p *mpiPlugin) Objects(*batchv1alpha1.Job) []Desired { return nil }

// pytorch: torch.distributed's environment (MASTER_ADDR, MASTER_PORT,
// WORLD_SIZE, RANK) in every container, the master's port declared, and,
// when asked, an init container that holds a worker until the master
// answers.
type pytorchPlugin struct {
	master, worker    string
	port              int
	waitMaster        bool
	waitMasterTimeout int
	waitMasterImage   string
}

// The pytorch plugin's defaults, environment variables and names.
const (
	PyTorchDefaultPort     = 23456
	PyTorchPortName        = "pytorchjob-port"
	PyTorchWaitContainer   = "wait-for-master"
	PyTorchDefaultWaitSecs = 300
	PyTorchDefaultWaitImg  = "busybox:1.36.1"
	EnvMasterAddr          = "MASTER_ADDR"
	EnvMasterPort          = "MASTER_PORT"
	EnvWorldSize           = "WORLD_SIZE"
	EnvRank                = "RANK"
)

func newPyTorchPlugin(args []string) (JobPlugin, error) {
	p := &pytorchPlugin{}
	if err := parseFlags("pytorch", args, func(fs *flag.FlagSet) {
		fs.StringVar(&p.master, "master", "master", "")
		fs.StringVar(&p.worker, "worker", "worker", "")
		fs.IntVar(&p.port, "port", PyTorchDefaultPort, "")
		fs.BoolVar(&p.waitMaster, "wait-master-enabled", false, "")
		fs.IntVar(&p.waitMasterTimeout, "wait-master-timeout", PyTorchDefaultWaitSecs, "")
		fs.StringVar(&p.waitMasterImage, "wait-master-image", PyTorchDefaultWaitImg, "")
	}); err != nil {
		return nil, err
	}
	if p.waitMasterTimeout < 1 {
		return nil, fmt.Errorf("--wait-master-timeout=%d: the wait is at least 1 second", p.waitMasterTimeout)
	}
	if p.waitMasterImage == "" {
		return nil, fmt.Errorf("--wait-master-image is empty")
	}
	return p, checkPort("port", p.port)
}

func (p *pytorchPlugin) Name() string { return "pytorch" }

// Rank is a pod's place in the world: the master's pods first, then the
// workers'. Other tasks have none.
func (p *pytorchPlugin) rank(job *batchv1alpha1.Job, task string, index int) (int, bool) {
	switch task {
	case p.master:
		return index, true
	case p.worker:
		return taskReplicas(job, p.master) + index, true
	}
	return 0, false
}

func (p *pytorchPlugin) MutatePod(job *batchv1alpha1.Job, pod *corev1.Pod, task string, index int) {
	masters := Hosts(job)[p.master]
	if len(masters) == 0 {
		return
	}
	env := []corev1.EnvVar{
		{Name: EnvMasterAddr, Value: masters[0]},
		{Name: EnvMasterPort, Value: strconv.Itoa(p.port)},
		{Name: EnvWorldSize, Value: strconv.Itoa(taskReplicas(job, p.master) + taskReplicas(job, p.worker))},
	}
	if r, ok := p.rank(job, task, index); ok {
		env = append(env, corev1.EnvVar{Name: EnvRank, Value: strconv.Itoa(r)})
	}
	addContainerEnv(pod, env...)
	for i := range pod.Spec.Containers {
		addPort(&pod.Spec.Containers[i], PyTorchPortName, p.port)
	}
	if task != p.worker || !p.waitMaster {
		return
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == PyTorchWaitContainer {
			return
		}
	}
	pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{
		Name:    PyTorchWaitContainer,
		Image:   p.waitMasterImage,
		Command: []string{"sh", "-c", waitForMasterScript(masters[0], p.port, p.waitMasterTimeout)},
	})
}

// waitForMasterScript polls host:port every 2 seconds until it accepts a
// connection, and fails after timeout seconds.
func waitForMasterScript(host string, port, timeout int) string {
	return fmt.Sprintf(`host=%s port=%d timeout=%d start=$(date +%%s)
until nc -z "$host" "$port" 2>/dev/null || (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; do
  now=$(date +%%s)
  if [ $((now - start)) -ge "$timeout" ]; then echo "the master $host:$port did not answer in ${timeout}s"; exit 1; fi
  echo "waiting for the master $host:$port"
  sleep 2
done
echo "the master $host:$port answers"`, host, port, timeout)
}

func (p *pytorchPlugin) Objects(*batchv1alpha1.Job) []Desired { return nil }

// tensorflow: TF_CONFIG, the cluster (each role's host:port list) and the
// pod's own role and index, in every container. A job of one pod runs
// alone and gets none.
type tensorflowPlugin struct {
	ps, worker, chief, evaluator string
	port                         int
}

// The tensorflow plugin's default port and environment variable.
const (
	TensorFlowDefaultPort = 2222
	EnvTFConfig           = "TF_CONFIG"
)

func newTensorFlowPlugin(args []string) (JobPlugin, error) {
	p := &tensorflowPlugin{}
	if err := parseFlags("tensorflow", args, func(fs *flag.FlagSet) {
		fs.StringVar(&p.ps, "ps", "ps", "")
		fs.StringVar(&p.worker, "worker", "worker", "")
		fs.StringVar(&p.chief, "chief", "chief", "")
		fs.StringVar(&p.evaluator, "evaluator", "evaluator", "")
		fs.IntVar(&p.port, "port", TensorFlowDefaultPort, "")
	}); err != nil {
		return nil, err
	}
	return p, checkPort("port", p.port)
}

func (p *tensorflowPlugin) Name() string { return "tensorflow" }

// TFConfig is TF_CONFIG's shape.
type TFConfig struct {
	Cluster TFCluster `json:"cluster"`
	Task    TFTask    `json:"task"`
}

// TFCluster lists each role's host:port addresses; empty roles are left
// out.
type TFCluster struct {
	PS        []string `json:"ps,omitempty"`
	Worker    []string `json:"worker,omitempty"`
	Chief     []string `json:"chief,omitempty"`
	Evaluator []string `json:"evaluator,omitempty"`
}

// TFTask is a pod's role and its index in the role.
type TFTask struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

func (p *tensorflowPlugin) MutatePod(job *batchv1alpha1.Job, pod *corev1.Pod, task string, index int) {
	if len(job.Spec.Tasks) == 1 && job.Spec.Tasks[0].Replicas == 1 {
		return
	}
	hosts := Hosts(job)
	addrs := func(task string) []string {
		var out []string
		for _, h := range hosts[task] {
			out = append(out, h+":"+strconv.Itoa(p.port))
		}
		return out
	}
	cfg := TFConfig{
		Cluster: TFCluster{PS: addrs(p.ps), Worker: addrs(p.worker), Chief: addrs(p.chief), Evaluator: addrs(p.evaluator)},
		Task:    TFTask{Type: task, Index: index},
	}
	for _, r := range []struct{ role, task string }{{"chief", p.chief}, {"worker", p.worker}, {"ps", p.ps}, {"evaluator", p.evaluator}} {
		if task == r.task {
			cfg.Task.Type = r.role
			break
		}
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		panic(err) // strings and ints only
	}
	addContainerEnv(pod, corev1.EnvVar{Name: EnvTFConfig, Value: string(raw)})
}

func (p *tensorflowPlugin) Objects(*batchv1alpha1.Job) []Desired { return nil }

// ray: the head's container starts the head (GCS, dashboard, client
// server) and declares its ports, each worker's container joins it, and a
// Service <job>-head-svc reaches the head's ports.
type rayPlugin struct {
	head, headContainer     string
	worker, workerContainer string
	port, dashboard, client int
}

// The ray plugin's default ports and port names.
const (
	RayDefaultPort          = 6379
	RayDefaultDashboardPort = 8265
	RayDefaultClientPort    = 10001
	RayGCSPortName          = "gcs"
	RayDashboardPortName    = "dashboard"
	RayClientPortName       = "client-server"
)

func newRayPlugin(args []string) (JobPlugin, error) {
	p := &rayPlugin{}
	if err := parseFlags("ray", args, func(fs *flag.FlagSet) {
		fs.StringVar(&p.head, "head", "head", "")
		fs.StringVar(&p.headContainer, "headContainer", "head", "")
		fs.StringVar(&p.worker, "worker", "worker", "")
		fs.StringVar(&p.workerContainer, "workerContainer", "worker", "")
		fs.IntVar(&p.port, "port", RayDefaultPort, "")
		fs.IntVar(&p.dashboard, "dashboardPort", RayDefaultDashboardPort, "")
		fs.IntVar(&p.client, "clientPort", RayDefaultClientPort, "")
	}); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		name string
		port int
	}{{"port", p.port}, {"dashboardPort", p.dashboard}, {"clientPort", p.client}} {
		if err := checkPort(c.name, c.port); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *rayPlugin) Name() string { return "ray" }

func (p *rayPlugin) Check(job *batchv1alpha1.Job) string {
	i := taskIndex(job, p.head)
	if i < 0 {
		return fmt.Sprintf("the head task %q is not one of the job's tasks (set --head=<task>)", p.head)
	}
	for _, c := range job.Spec.Tasks[i].Template.Spec.Containers {
		if c.Name == p.headContainer {
			return ""
		}
	}
	return fmt.Sprintf("the head task %q has no container %q (set --headContainer=<container>)", p.head, p.headContainer)
}

// RayHeadService is the name of the Service in front of a Ray job's head.
func RayHeadService(job *batchv1alpha1.Job) string { return job.Name + "-head-svc" }

func (p *rayPlugin) MutatePod(job *batchv1alpha1.Job, pod *corev1.Pod, task string, _ int) {
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		switch {
		case task == p.head && c.Name == p.headContainer:
			addPort(c, RayGCSPortName, p.port)
			addPort(c, RayDashboardPortName, p.dashboard)
			addPort(c, RayClientPortName, p.client)
			c.Command = []string{"sh", "-c", fmt.Sprintf("ray start --head --block --dashboard-host=0.0.0.0 --port=%d --dashboard-port=%d --ray-client-server-port=%d", p.port, p.dashboard, p.client)}
		case task == p.worker && c.Name == p.workerContainer:
			heads := Hosts(job)[p.head]
			if len(heads) == 0 {
				continue
			}
			c.Command = []string{"sh", "-c", fmt.Sprintf("ray start --block --address=%s:%d", heads[0], p.port)}
		}
	}
}

func (p *rayPlugin) Objects(job *batchv1alpha1.Job) []Desired {
	selector := jobSelector(job)
	selector[batchv1alpha1.TaskSpecKey] = p.head
	port := func(name string, n int) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: int32(n), TargetPort: intstr.FromString(name), Protocol: corev1.ProtocolTCP}
	}
	return []Desired{{CreateOnly: true, Object: &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: RayHeadService(job)},
		Spec: corev1.ServiceSpec{
			Selector: selector,
			Ports:    []corev1.ServicePort{port(RayGCSPortName, p.port), port(RayDashboardPortName, p.dashboard), port(RayClientPortName, p.client)},
		},
	}}}
}

// hcclrank: each master and worker pod carries its HCCL rank in the
// annotation hccl/rankIndex, which Ascend's runtime reads: a rank the pod
// already has (the annotation, or a literal RANK in a container's
// environment, as pytorch gives) is kept; otherwise the masters' pods come
// first, then the workers'.
type hcclRankPlugin struct {
	master, worker string
}

// HCCLRankAnnotation holds a pod's HCCL rank.
const HCCLRankAnnotation = "hccl/rankIndex"

func newHCCLRankPlugin(args []string) (JobPlugin, error) {
	p := &hcclRankPlugin{}
	return p, parseFlags("hcclrank", args, func(fs *flag.FlagSet) {
		fs.StringVar(&p.master, "master", "master", "")
		fs.StringVar(&p.worker, "worker", "worker", "")
	})
}

func (p *hcclRankPlugin) Name() string { return "hcclrank" }

func (p *hcclRankPlugin) MutatePod(job *batchv1alpha1.Job, pod *corev1.Pod, task string, index int) {
	if pod.Annotations[HCCLRankAnnotation] != "" {
		return
	}
	for _, c := range pod.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == EnvRank && e.Value != "" {
				pod.Annotations[HCCLRankAnnotation] = e.Value
				return
			}
		}
	}
	switch task {
	case p.master:
		pod.Annotations[HCCLRankAnnotation] = strconv.Itoa(index)
	case p.worker:
		pod.Annotations[HCCLRankAnnotation] = strconv.Itoa(taskReplicas(job, p.master) + index)
	}
}

func (p *hcclRankPlugin) Objects(*batchv1alpha1.Job) []Desired { return nil }
