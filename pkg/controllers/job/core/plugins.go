package core

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// Object is a Kubernetes object the controller keeps for a Job.
type Object interface {
	metav1.Object
	runtime.Object
}

// Desired is an object a Job needs.
type Desired struct {
	Object Object
	// CreateOnly objects are created when missing and never changed after;
	// others are updated to match.
	CreateOnly bool
	// Fill, when set, completes the object right before it is created (the
	// ssh plugin's key pair: generated once, not at every decision).
	Fill func(Object) error
}

// JobPlugin adds to a Job's pods and objects what a framework needs
// (Volcano's job plugins, keyed by name in spec.plugins).
type JobPlugin interface {
	Name() string
	MutatePod(job *batchv1alpha1.Job, pod *corev1.Pod, task string, index int)
	Objects(job *batchv1alpha1.Job) []Desired
}

// KeyPair generates an ssh key pair: a PEM private key and an
// authorized_keys line.
type KeyPair func() (private, public []byte, err error)

// pluginFactory builds a plugin from its arguments.
type pluginFactory func(args []string, keys KeyPair) (JobPlugin, error)

// pluginFactories are the job plugins Volcano's job controller runs, by
// the name spec.plugins gives them.
var pluginFactories = map[string]pluginFactory{
	"env":        func(args []string, _ KeyPair) (JobPlugin, error) { return newEnvPlugin(args) },
	"svc":        func(args []string, _ KeyPair) (JobPlugin, error) { return newSvcPlugin(args) },
	"ssh":        newSSHPlugin,
	"mpi":        func(args []string, _ KeyPair) (JobPlugin, error) { return newMPIPlugin(args) },
	"pytorch":    func(args []string, _ KeyPair) (JobPlugin, error) { return newPyTorchPlugin(args) },
	"tensorflow": func(args []string, _ KeyPair) (JobPlugin, error) { return newTensorFlowPlugin(args) },
	"ray":        func(args []string, _ KeyPair) (JobPlugin, error) { return newRayPlugin(args) },
	"hcclrank":   func(args []string, _ KeyPair) (JobPlugin, error) { return newHCCLRankPlugin(args) },
}

// pluginOrder is the order plugins change a pod in: hcclrank last, so that
// it reads the RANK pytorch gives.
var pluginOrder = []string{"env", "svc", "ssh", "mpi", "pytorch", "tensorflow", "ray", "hcclrank"}

// PluginNames returns the job plugins a Job may name, sorted.
func PluginNames() []string {
	return slices.Sorted(maps.Keys(pluginFactories))
}

// jobChecker is a plugin that needs something of the Job it runs for (a
// task it names): Check says what is missing, or "".
type jobChecker interface {
	Check(job *batchv1alpha1.Job) string
}

// ValidatePlugins checks spec.plugins as the job controller will read it:
// every plugin is one this version runs, its arguments are flags it
// defines with values of the right type, and the tasks it needs exist.
func ValidatePlugins(job *batchv1alpha1.Job, fldPath *field.Path) field.ErrorList {
	_, errs := parsePlugins(job, nil, fldPath)
	return errs
}

// NewPlugins parses a Job's spec.plugins, in the order they change a pod.
// Unknown plugins, bad arguments and missing tasks are errors naming the
// plugin's field.
func NewPlugins(job *batchv1alpha1.Job, keys KeyPair) ([]JobPlugin, error) {
	plugins, errs := parsePlugins(job, keys, field.NewPath("spec", "plugins"))
	return plugins, errs.ToAggregate()
}

func parsePlugins(job *batchv1alpha1.Job, keys KeyPair, fldPath *field.Path) ([]JobPlugin, field.ErrorList) {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(job.Spec.Plugins)) {
		if _, ok := pluginFactories[name]; !ok {
			errs = append(errs, field.NotSupported(fldPath.Key(name), name, PluginNames()))
		}
	}
	var out []JobPlugin
	for _, name := range pluginOrder {
		args, ok := job.Spec.Plugins[name]
		if !ok {
			continue
		}
		p, err := pluginFactories[name](args, keys)
		if err != nil {
			errs = append(errs, field.Invalid(fldPath.Key(name), args, err.Error()))
			continue
		}
		if c, ok := p.(jobChecker); ok {
			if problem := c.Check(job); problem != "" {
				errs = append(errs, field.Invalid(fldPath.Key(name), args, problem))
				continue
			}
		}
		out = append(out, p)
	}
	return out, errs
}

// parseFlags reads a plugin's arguments as Go flags ("--port=22",
// "--port 22", "-port=22"). A flag the plugin does not define, a value of
// the wrong type or a stray argument is an error.
func parseFlags(name string, args []string, define func(*flag.FlagSet)) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	define(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return fmt.Errorf("flag provided but not defined: %s", strings.Join(args, " "))
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (flags are written --name=value)", fs.Args())
	}
	return nil
}

// checkPort refuses a port number outside 1-65535.
func checkPort(flagName string, port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("--%s=%d: a port is between 1 and 65535", flagName, port)
	}
	return nil
}

// taskIndex returns the index of the task with the given name, or -1.
func taskIndex(job *batchv1alpha1.Job, name string) int {
	for i := range job.Spec.Tasks {
		if TaskName(job, i) == name {
			return i
		}
	}
	return -1
}

// taskReplicas returns the replicas of the named task, 0 when there is none.
func taskReplicas(job *batchv1alpha1.Job, name string) int {
	if i := taskIndex(job, name); i >= 0 {
		return int(job.Spec.Tasks[i].Replicas)
	}
	return 0
}

// addPort gives a container a port unless one of its ports has that number.
func addPort(c *corev1.Container, name string, port int) {
	for _, p := range c.Ports {
		if int(p.ContainerPort) == port {
			return
		}
	}
	c.Ports = append(c.Ports, corev1.ContainerPort{Name: name, ContainerPort: int32(port), Protocol: corev1.ProtocolTCP})
}

// env: every container learns its pod's index within the task.
type envPlugin struct{}

func newEnvPlugin(args []string) (JobPlugin, error) {
	return &envPlugin{}, parseFlags("env", args, func(*flag.FlagSet) {})
}

func (p *envPlugin) Name() string { return "env" }

// The environment variables holding the pod's index within its task.
const (
	EnvTaskIndex   = "VC_TASK_INDEX"
	EnvVKTaskIndex = "VK_TASK_INDEX"
)

func (p *envPlugin) MutatePod(_ *batchv1alpha1.Job, pod *corev1.Pod, _ string, index int) {
	env := []corev1.EnvVar{{Name: EnvVKTaskIndex, Value: strconv.Itoa(index)}, {Name: EnvTaskIndex, Value: strconv.Itoa(index)}}
	addEnv(pod, env)
}

func (p *envPlugin) Objects(*batchv1alpha1.Job) []Desired { return nil }

func addEnv(pod *corev1.Pod, env []corev1.EnvVar) {
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, env...)
	}
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].Env = append(pod.Spec.InitContainers[i].Env, env...)
	}
}

// svc: a headless Service gives every pod a stable DNS name
// (<pod>.<job>), a ConfigMap lists every task's hosts, and a NetworkPolicy
// (unless disabled) lets only the job's pods reach them.
type svcPlugin struct {
	publishNotReady      bool
	disableNetworkPolicy bool
	injectHostsEnv       bool
}

// SvcMountPath is where the svc plugin's hosts ConfigMap is mounted.
const SvcMountPath = "/etc/volcano"

func newSvcPlugin(args []string) (JobPlugin, error) {
	p := &svcPlugin{}
	return p, parseFlags("svc", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&p.publishNotReady, "publish-not-ready-addresses", false, "")
		fs.BoolVar(&p.disableNetworkPolicy, "disable-network-policy", false, "")
		fs.BoolVar(&p.injectHostsEnv, "inject-hosts-env", true, "")
	})
}

func (p *svcPlugin) Name() string { return "svc" }

func svcConfigMapName(job *batchv1alpha1.Job) string { return job.Name + "-svc" }

func envKey(task string) string { return strings.ToUpper(strings.ReplaceAll(task, "-", "_")) }

func (p *svcPlugin) MutatePod(job *batchv1alpha1.Job, pod *corev1.Pod, _ string, _ int) {
	if pod.Spec.Hostname == "" {
		pod.Spec.Hostname = pod.Name
	}
	if pod.Spec.Subdomain == "" {
		pod.Spec.Subdomain = job.Name
	}
	cm := svcConfigMapName(job)
	var env []corev1.EnvVar
	for i := range job.Spec.Tasks {
		if !p.injectHostsEnv {
			break
		}
		key := envKey(TaskName(job, i))
		for _, name := range []string{"VC_" + key + "_HOSTS", "VC_" + key + "_NUM"} {
			env = append(env, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Key: name,
			}}})
		}
	}
	addEnv(pod, env)
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: cm, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}},
	}})
	mount := corev1.VolumeMount{Name: cm, MountPath: SvcMountPath}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].VolumeMounts = append(pod.Spec.Containers[i].VolumeMounts, mount)
	}
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].VolumeMounts = append(pod.Spec.InitContainers[i].VolumeMounts, mount)
	}
}

// Hosts lists each task's pod addresses ("<hostname>.<subdomain>"); a task
// whose template fixes a hostname has that one address.
func Hosts(job *batchv1alpha1.Job) map[string][]string {
	out := map[string][]string{}
	for i, ts := range job.Spec.Tasks {
		task := TaskName(job, i)
		subdomain := ts.Template.Spec.Subdomain
		if subdomain == "" {
			subdomain = job.Name
		}
		if h := ts.Template.Spec.Hostname; h != "" {
			out[task] = []string{h + "." + subdomain}
			continue
		}
		for idx := range int(ts.Replicas) {
			out[task] = append(out[task], PodName(job.Name, task, idx)+"."+subdomain)
		}
	}
	return out
}

func jobSelector(job *batchv1alpha1.Job) map[string]string {
	return map[string]string{batchv1alpha1.JobNameKey: job.Name, batchv1alpha1.JobNamespaceKey: job.Namespace}
}

func (p *svcPlugin) Objects(job *batchv1alpha1.Job) []Desired {
	data := map[string]string{}
	for task, hosts := range Hosts(job) {
		key := envKey(task)
		data[strings.ReplaceAll(task, "-", "_")+".host"] = strings.Join(hosts, "\n")
		data["VC_"+key+"_HOSTS"] = strings.Join(hosts, ",")
		data["VC_"+key+"_NUM"] = strconv.Itoa(len(hosts))
	}
	out := []Desired{
		{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: svcConfigMapName(job)}, Data: data}},
		{CreateOnly: true, Object: &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name},
			Spec: corev1.ServiceSpec{
				ClusterIP:                corev1.ClusterIPNone,
				Selector:                 jobSelector(job),
				PublishNotReadyAddresses: p.publishNotReady,
			},
		}},
	}
	if !p.disableNetworkPolicy {
		out = append(out, Desired{CreateOnly: true, Object: &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: jobSelector(job)},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{
					From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: jobSelector(job)}}},
				}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			},
		}})
	}
	return out
}

// ssh: a key pair in a Secret, mounted in every container, with an ssh
// config naming every pod, so MPI-style launchers reach the workers. The
// pair is generated once per Job unless the arguments give one.
type sshPlugin struct {
	keys       KeyPair
	keyPath    string
	privateKey string
	publicKey  string
	port       int
}

// The ssh plugin's Secret keys, default mount path and port.
const (
	SSHPrivateKey     = "id_rsa"
	SSHPublicKey      = "id_rsa.pub"
	SSHAuthorizedKeys = "authorized_keys"
	SSHConfig         = "config"
	SSHDefaultPath    = "/root/.ssh"
	SSHDefaultPort    = 22
	sshSubPath        = ".ssh"
)

func newSSHPlugin(args []string, keys KeyPair) (JobPlugin, error) {
	p := &sshPlugin{keys: keys}
	var noRoot bool
	err := parseFlags("ssh", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&noRoot, "no-root", false, "")
		fs.StringVar(&p.keyPath, "ssh-key-file-path", SSHDefaultPath, "")
		fs.StringVar(&p.privateKey, "ssh-private-key", "", "")
		fs.StringVar(&p.publicKey, "ssh-public-key", "", "")
		fs.IntVar(&p.port, "ssh-port", SSHDefaultPort, "")
	})
	if err != nil {
		return nil, err
	}
	if noRoot && p.keyPath == SSHDefaultPath {
		p.keyPath = SvcMountPath + "/" + sshSubPath
	}
	if (p.privateKey == "") != (p.publicKey == "") {
		return nil, fmt.Errorf("--ssh-private-key and --ssh-public-key are given together or not at all")
	}
	return p, checkPort("ssh-port", p.port)
}

func (p *sshPlugin) Name() string { return "ssh" }

func sshSecretName(job *batchv1alpha1.Job) string { return job.Name + "-ssh" }

func (p *sshPlugin) MutatePod(job *batchv1alpha1.Job, pod *corev1.Pod, _ string, _ int) {
	name := sshSecretName(job)
	mode := int32(0o600)
	if p.keyPath != SSHDefaultPath {
		mode = 0o644
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: name,
		Items: []corev1.KeyToPath{
			{Key: SSHPrivateKey, Path: sshSubPath + "/" + SSHPrivateKey},
			{Key: SSHPublicKey, Path: sshSubPath + "/" + SSHPublicKey},
			{Key: SSHPublicKey, Path: sshSubPath + "/" + SSHAuthorizedKeys},
			{Key: SSHConfig, Path: sshSubPath + "/" + SSHConfig},
		},
		DefaultMode: &mode,
	}}})
	mount := corev1.VolumeMount{Name: name, MountPath: p.keyPath, SubPath: sshSubPath}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].VolumeMounts = append(pod.Spec.Containers[i].VolumeMounts, mount)
	}
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].VolumeMounts = append(pod.Spec.InitContainers[i].VolumeMounts, mount)
	}
}

func (p *sshPlugin) Objects(job *batchv1alpha1.Job) []Desired {
	var config strings.Builder
	config.WriteString("StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n")
	hosts := Hosts(job)
	for i := range job.Spec.Tasks {
		for _, addr := range hosts[TaskName(job, i)] {
			host, _, _ := strings.Cut(addr, ".")
			fmt.Fprintf(&config, "Host %s\n  HostName %s\n  Port %d\n", host, addr, p.port)
		}
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: sshSecretName(job)},
		Data:       map[string][]byte{SSHConfig: []byte(config.String())},
	}
	return []Desired{{Object: secret, CreateOnly: true, Fill: func(o Object) error {
		s := o.(*corev1.Secret)
		if p.privateKey != "" {
			s.Data[SSHPrivateKey] = []byte(p.privateKey)
			s.Data[SSHPublicKey] = []byte(p.publicKey)
			return nil
		}
		if p.keys == nil {
			return fmt.Errorf("no ssh key generator")
		}
		priv, pub, err := p.keys()
		if err != nil {
			return fmt.Errorf("generating the ssh key pair: %w", err)
		}
		s.Data[SSHPrivateKey] = priv
		s.Data[SSHPublicKey] = pub
		return nil
	}}}
}
