package core

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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

// NewPlugins parses a Job's spec.plugins. Unknown plugins and bad
// arguments are errors naming the plugin.
func NewPlugins(job *batchv1alpha1.Job, keys KeyPair) ([]JobPlugin, error) {
	names := make([]string, 0, len(job.Spec.Plugins))
	for name := range job.Spec.Plugins {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []JobPlugin
	for _, name := range names {
		args := job.Spec.Plugins[name]
		var p JobPlugin
		var err error
		switch name {
		case "env":
			p, err = newEnvPlugin(args)
		case "svc":
			p, err = newSvcPlugin(args)
		case "ssh":
			p, err = newSSHPlugin(args, keys)
		default:
			return nil, fmt.Errorf("spec.plugins[%s]: plugin not available in this version (available: env, ssh, svc)", name)
		}
		if err != nil {
			return nil, fmt.Errorf("spec.plugins[%s]: %w", name, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func parseFlags(name string, args []string, define func(*flag.FlagSet)) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	define(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return nil
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
}

// SvcMountPath is where the svc plugin's hosts ConfigMap is mounted.
const SvcMountPath = "/etc/volcano"

func newSvcPlugin(args []string) (JobPlugin, error) {
	p := &svcPlugin{}
	return p, parseFlags("svc", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&p.publishNotReady, "publish-not-ready-addresses", false, "")
		fs.BoolVar(&p.disableNetworkPolicy, "disable-network-policy", false, "")
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
// config naming every pod, so MPI-style launchers reach the workers.
type sshPlugin struct {
	keys    KeyPair
	keyPath string
}

// The ssh plugin's Secret keys and default mount path.
const (
	SSHPrivateKey     = "id_rsa"
	SSHPublicKey      = "id_rsa.pub"
	SSHAuthorizedKeys = "authorized_keys"
	SSHConfig         = "config"
	SSHDefaultPath    = "/root/.ssh"
	sshSubPath        = ".ssh"
)

func newSSHPlugin(args []string, keys KeyPair) (JobPlugin, error) {
	p := &sshPlugin{keys: keys}
	var noRoot bool
	err := parseFlags("ssh", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&noRoot, "no-root", false, "")
		fs.StringVar(&p.keyPath, "ssh-key-file-path", SSHDefaultPath, "")
	})
	if noRoot && p.keyPath == SSHDefaultPath {
		p.keyPath = SvcMountPath + "/" + sshSubPath
	}
	return p, err
}

func (p *sshPlugin) Name() string { return "ssh" }

func sshSecretName(job *batchv1alpha1.Job) string { return job.Name + "-ssh" }

func (p *sshPlugin) MutatePod(job *batchv1alpha1.Job, pod *corev1.Pod, _ string, _ int) {
	name := sshSecretName(job)
	mode := int32(0o600)
	if p.keyPath != SSHDefaultPath {
		mode = 0o755
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
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].VolumeMounts = append(pod.Spec.Containers[i].VolumeMounts,
			corev1.VolumeMount{Name: name, MountPath: p.keyPath, SubPath: sshSubPath})
	}
}

func (p *sshPlugin) Objects(job *batchv1alpha1.Job) []Desired {
	var config strings.Builder
	config.WriteString("StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n")
	for i := range job.Spec.Tasks {
		for _, addr := range Hosts(job)[TaskName(job, i)] {
			host, _, _ := strings.Cut(addr, ".")
			fmt.Fprintf(&config, "Host %s\n  HostName %s\n", host, addr)
		}
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: sshSecretName(job)},
		Data:       map[string][]byte{SSHConfig: []byte(config.String())},
	}
	return []Desired{{Object: secret, CreateOnly: true, Fill: func(o Object) error {
		if p.keys == nil {
			return fmt.Errorf("no ssh key generator")
		}
		priv, pub, err := p.keys()
		if err != nil {
			return fmt.Errorf("generating the ssh key pair: %w", err)
		}
		s := o.(*corev1.Secret)
		s.Data[SSHPrivateKey] = priv
		s.Data[SSHPublicKey] = pub
		return nil
	}}}
}
