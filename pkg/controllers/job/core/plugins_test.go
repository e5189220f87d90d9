package core

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	bt "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
)

// pluginsOf parses a job's plugins, failing the test on an error.
func pluginsOf(t *testing.T, j *batchv1alpha1.Job) []JobPlugin {
	t.Helper()
	plugins, err := NewPlugins(j, func() ([]byte, []byte, error) { return []byte("priv"), []byte("pub"), nil })
	if err != nil {
		t.Fatal(err)
	}
	return plugins
}

// envOf returns a container's environment as name → value (or "from
// <configmap>/<key>").
func envOf(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		out[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
			out[e.Name] = "from " + e.ValueFrom.ConfigMapKeyRef.Name + "/" + e.ValueFrom.ConfigMapKeyRef.Key
		}
	}
	return out
}

func portsOf(c corev1.Container) map[string]int32 {
	out := map[string]int32{}
	for _, p := range c.Ports {
		out[p.Name] = p.ContainerPort
	}
	return out
}

func TestPluginArgumentsAreChecked(t *testing.T) {
	masterWorker := func(w *bt.JobWrapper) *bt.JobWrapper {
		return w.Task(bt.MakeTask("master", 1)).Task(bt.MakeTask("worker", 2))
	}
	for _, tc := range []struct {
		name string
		job  *bt.JobWrapper
		want string // "" when the plugins are valid
	}{
		{"every plugin with its defaults", masterWorker(bt.MakeJob("j", "ns").Plugin("env").Plugin("svc").Plugin("ssh").Plugin("mpi").Plugin("pytorch").Plugin("tensorflow").Plugin("hcclrank")), ""},
		{"flags in each form Go reads", masterWorker(bt.MakeJob("j", "ns").Plugin("pytorch", "--port", "3000", "-master=master", "--wait-master-enabled")), ""},
		{"an unknown plugin", masterWorker(bt.MakeJob("j", "ns").Plugin("tensorflw")),
			`spec.plugins[tensorflw]: Unsupported value: "tensorflw": supported values: "env", "hcclrank", "mpi", "pytorch", "ray", "ssh", "svc", "tensorflow"`},
		{"an unknown flag", masterWorker(bt.MakeJob("j", "ns").Plugin("svc", "--inject-host-env=false")),
			`spec.plugins[svc]: Invalid value: ["--inject-host-env=false"]: flag provided but not defined: -inject-host-env`},
		{"a port that is not a number", masterWorker(bt.MakeJob("j", "ns").Plugin("pytorch", "--port=http")),
			`spec.plugins[pytorch]: Invalid value: ["--port=http"]: invalid value "http" for flag -port: parse error`},
		{"a port out of range", masterWorker(bt.MakeJob("j", "ns").Plugin("ssh", "--ssh-port=70000")),
			`spec.plugins[ssh]: Invalid value: ["--ssh-port=70000"]: --ssh-port=70000: a port is between 1 and 65535`},
		{"a stray argument", masterWorker(bt.MakeJob("j", "ns").Plugin("mpi", "master")),
			`spec.plugins[mpi]: Invalid value: ["master"]: unexpected arguments ["master"] (flags are written --name=value)`},
		{"an ssh private key without its public key", masterWorker(bt.MakeJob("j", "ns").Plugin("ssh", "--ssh-private-key=KEY")),
			`spec.plugins[ssh]: Invalid value: ["--ssh-private-key=KEY"]: --ssh-private-key and --ssh-public-key are given together or not at all`},
		{"mpi without its master task", bt.MakeJob("j", "ns").Plugin("mpi").Task(bt.MakeTask("launcher", 1)).Task(bt.MakeTask("worker", 2)),
			`spec.plugins[mpi]: Invalid value: []: the master task "master" is not one of the job's tasks (set --master=<task>)`},
		{"mpi without its worker task", bt.MakeJob("j", "ns").Plugin("mpi").Task(bt.MakeTask("master", 1)).Task(bt.MakeTask("node", 2)),
			`spec.plugins[mpi]: Invalid value: []: the worker task "worker" is not one of the job's tasks (set --worker=<task>)`},
		{"mpi with its tasks named, --flag value form", bt.MakeJob("j", "ns").Plugin("mpi", "--master=launcher", "--worker", "node").Task(bt.MakeTask("launcher", 1)).Task(bt.MakeTask("node", 2)), ""},
		{"mpi with its master named", bt.MakeJob("j", "ns").Plugin("mpi", "--master=launcher").Task(bt.MakeTask("launcher", 1)).Task(bt.MakeTask("worker", 2)), ""},
		{"ray without its head task", masterWorker(bt.MakeJob("j", "ns").Plugin("ray")),
			`spec.plugins[ray]: Invalid value: []: the head task "head" is not one of the job's tasks (set --head=<task>)`},
		{"ray's head without the head container", bt.MakeJob("j", "ns").Plugin("ray").Task(bt.MakeTask("head", 1)).Task(bt.MakeTask("worker", 2)),
			`spec.plugins[ray]: Invalid value: []: the head task "head" has no container "head" (set --headContainer=<container>)`},
		{"two bad plugins, both said", masterWorker(bt.MakeJob("j", "ns").Plugin("nope").Plugin("env", "--x")),
			`[spec.plugins[nope]: Unsupported value: "nope": supported values: "env", "hcclrank", "mpi", "pytorch", "ray", "ssh", "svc", "tensorflow", spec.plugins[env]: Invalid value: ["--x"]: flag provided but not defined: -x]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPlugins(defaulted(tc.job), nil)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("error\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestAdmissionAddsTheServicePluginsFrameworksNeed(t *testing.T) {
	for plugin, want := range map[string][]string{
		"mpi": {"mpi", "ssh", "svc"}, "pytorch": {"pytorch", "svc"}, "tensorflow": {"svc", "tensorflow"},
		"ray": {"ray", "svc"}, "hcclrank": {"hcclrank"}, "env": {"env"},
	} {
		j := defaulted(bt.MakeJob("j", "ns").Plugin(plugin).Task(bt.MakeTask("master", 1)).Task(bt.MakeTask("worker", 1)).Task(bt.MakeTask("head", 1).ContainerName("head")))
		var got []string
		for _, p := range pluginsOf(t, j) {
			got = append(got, p.Name())
		}
		slices.Sort(got)
		if !cmp.Equal(got, want) {
			t.Errorf("%s: plugins %v, want %v", plugin, got, want)
		}
	}
}

func TestMPIPlugin(t *testing.T) {
	j := defaulted(bt.MakeJob("lm", "ns").Plugin("mpi", "--master=mpimaster", "--worker=mpiworker", "--port=2222").
		Task(bt.MakeTask("mpimaster", 1)).Task(bt.MakeTask("mpiworker", 3)))
	j.Spec.Tasks[0].Template.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	plugins := pluginsOf(t, j)
	master := BuildPod(j, 0, 0, plugins)
	wantHosts := "lm-mpiworker-0.lm,lm-mpiworker-1.lm,lm-mpiworker-2.lm"
	for _, c := range append(master.Spec.Containers, master.Spec.InitContainers...) {
		if got := envOf(c)[EnvMPIHost]; got != wantHosts {
			t.Errorf("master container %s: MPI_HOST = %q, want %q", c.Name, got, wantHosts)
		}
		if got := portsOf(c)[MPIPortName]; got != 2222 {
			t.Errorf("master container %s: %s = %d, want 2222", c.Name, MPIPortName, got)
		}
	}
	worker := BuildPod(j, 1, 2, plugins)
	if _, ok := envOf(worker.Spec.Containers[0])[EnvMPIHost]; ok {
		t.Errorf("a worker has MPI_HOST")
	}
	if got := portsOf(worker.Spec.Containers[0])[MPIPortName]; got != 2222 {
		t.Errorf("worker: %s = %d, want 2222", MPIPortName, got)
	}
	// ssh and svc came with mpi: the launcher reaches the workers by name.
	if envOf(worker.Spec.Containers[0])["VC_MPIWORKER_HOSTS"] != "from lm-svc/VC_MPIWORKER_HOSTS" {
		t.Errorf("worker env %v: svc's hosts missing", envOf(worker.Spec.Containers[0]))
	}
}

func TestPyTorchPlugin(t *testing.T) {
	j := defaulted(bt.MakeJob("pt", "ns").Plugin("pytorch", "--master=master", "--worker=worker", "--port=23456", "--wait-master-enabled=true", "--wait-master-timeout=600").
		Task(bt.MakeTask("master", 1)).Task(bt.MakeTask("worker", 3)).Task(bt.MakeTask("tensorboard", 1)))
	plugins := pluginsOf(t, j)
	for _, tc := range []struct {
		task, index int
		rank        string
	}{{0, 0, "0"}, {1, 0, "1"}, {1, 2, "3"}, {2, 0, ""}} {
		pod := BuildPod(j, tc.task, tc.index, plugins)
		env := envOf(pod.Spec.Containers[0])
		want := map[string]string{EnvMasterAddr: "pt-master-0.pt", EnvMasterPort: "23456", EnvWorldSize: "4"}
		if tc.rank != "" {
			want[EnvRank] = tc.rank
		}
		got := map[string]string{}
		for k := range map[string]bool{EnvMasterAddr: true, EnvMasterPort: true, EnvWorldSize: true, EnvRank: true} {
			if v, ok := env[k]; ok {
				got[k] = v
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: env (-want,+got):\n%s", pod.Name, diff)
		}
		if p := portsOf(pod.Spec.Containers[0])[PyTorchPortName]; p != 23456 {
			t.Errorf("%s: %s = %d", pod.Name, PyTorchPortName, p)
		}
		waits := 0
		for _, c := range pod.Spec.InitContainers {
			if c.Name == PyTorchWaitContainer {
				waits++
				if c.Image != PyTorchDefaultWaitImg || !strings.Contains(c.Command[2], "host=pt-master-0.pt port=23456 timeout=600") {
					t.Errorf("%s: wait container %s %q", pod.Name, c.Image, c.Command)
				}
			}
		}
		if want := map[bool]int{true: 1, false: 0}[tc.task == 1]; waits != want {
			t.Errorf("%s: %d wait-for-master containers, want %d", pod.Name, waits, want)
		}
	}
}

func TestTensorFlowPlugin(t *testing.T) {
	j := defaulted(bt.MakeJob("train-123", "ns").Plugin("tensorflow", "--port=5000", "--worker=worker", "--ps=ps").
		Task(bt.MakeTask("ps", 2)).Task(bt.MakeTask("worker", 2)).Task(bt.MakeTask("chief", 1)).Task(bt.MakeTask("logger", 1)))
	plugins := pluginsOf(t, j)
	cluster := `"cluster":{"ps":["train-123-ps-0.train-123:5000","train-123-ps-1.train-123:5000"],"worker":["train-123-worker-0.train-123:5000","train-123-worker-1.train-123:5000"],"chief":["train-123-chief-0.train-123:5000"]}`
	for _, tc := range []struct {
		task, index int
		want        string
	}{
		{1, 1, `{` + cluster + `,"task":{"type":"worker","index":1}}`},
		{0, 0, `{` + cluster + `,"task":{"type":"ps","index":0}}`},
		{2, 0, `{` + cluster + `,"task":{"type":"chief","index":0}}`},
		{3, 0, `{` + cluster + `,"task":{"type":"logger","index":0}}`},
	} {
		pod := BuildPod(j, tc.task, tc.index, plugins)
		got := envOf(pod.Spec.Containers[0])[EnvTFConfig]
		if got != tc.want {
			t.Errorf("%s: TF_CONFIG\n got %s\nwant %s", pod.Name, got, tc.want)
		}
		var cfg TFConfig
		if err := json.Unmarshal([]byte(got), &cfg); err != nil {
			t.Errorf("%s: TF_CONFIG is not JSON: %v", pod.Name, err)
		}
	}
	alone := defaulted(bt.MakeJob("one", "ns").Plugin("tensorflow").Task(bt.MakeTask("worker", 1)))
	if _, ok := envOf(BuildPod(alone, 0, 0, pluginsOf(t, alone)).Spec.Containers[0])[EnvTFConfig]; ok {
		t.Errorf("a job of one pod got TF_CONFIG")
	}
}

func TestRayPlugin(t *testing.T) {
	j := defaulted(bt.MakeJob("ray", "ns").Plugin("ray", "--port=2345", "--headContainer=ray", "--workerContainer=ray").
		Task(bt.MakeTask("head", 1).ContainerName("ray")).Task(bt.MakeTask("worker", 2).ContainerName("ray")))
	plugins := pluginsOf(t, j)
	head := BuildPod(j, 0, 0, plugins).Spec.Containers[0]
	if want := []string{"sh", "-c", "ray start --head --block --dashboard-host=0.0.0.0 --port=2345 --dashboard-port=8265 --ray-client-server-port=10001"}; !cmp.Equal(head.Command, want) {
		t.Errorf("head command %q, want %q", head.Command, want)
	}
	if diff := cmp.Diff(map[string]int32{"gcs": 2345, "dashboard": 8265, "client-server": 10001}, portsOf(head)); diff != "" {
		t.Errorf("head ports (-want,+got):\n%s", diff)
	}
	worker := BuildPod(j, 1, 1, plugins).Spec.Containers[0]
	if want := []string{"sh", "-c", "ray start --block --address=ray-head-0.ray:2345"}; !cmp.Equal(worker.Command, want) {
		t.Errorf("worker command %q, want %q", worker.Command, want)
	}
	var svc *corev1.Service
	for _, p := range plugins {
		for _, o := range p.Objects(j) {
			if s, ok := o.Object.(*corev1.Service); ok && s.Name == "ray-head-svc" {
				svc = s
			}
		}
	}
	if svc == nil {
		t.Fatal("no Service ray-head-svc")
	}
	want := corev1.ServiceSpec{
		Selector: map[string]string{batchv1alpha1.JobNameKey: "ray", batchv1alpha1.JobNamespaceKey: "ns", batchv1alpha1.TaskSpecKey: "head"},
		Ports: []corev1.ServicePort{
			{Name: "gcs", Port: 2345, TargetPort: intstr.FromString("gcs"), Protocol: corev1.ProtocolTCP},
			{Name: "dashboard", Port: 8265, TargetPort: intstr.FromString("dashboard"), Protocol: corev1.ProtocolTCP},
			{Name: "client-server", Port: 10001, TargetPort: intstr.FromString("client-server"), Protocol: corev1.ProtocolTCP},
		},
	}
	if diff := cmp.Diff(want, svc.Spec); diff != "" {
		t.Errorf("head Service (-want,+got):\n%s", diff)
	}
}

func TestHCCLRankPlugin(t *testing.T) {
	two := defaulted(bt.MakeJob("npu", "ns").Plugin("hcclrank").Task(bt.MakeTask("master", 2)).Task(bt.MakeTask("worker", 2)).Task(bt.MakeTask("other", 1)))
	plugins := pluginsOf(t, two)
	for _, tc := range []struct {
		task, index int
		want        string
	}{{0, 0, "0"}, {0, 1, "1"}, {1, 0, "2"}, {1, 1, "3"}, {2, 0, ""}} {
		pod := BuildPod(two, tc.task, tc.index, plugins)
		if got := pod.Annotations[HCCLRankAnnotation]; got != tc.want {
			t.Errorf("%s: %s = %q, want %q", pod.Name, HCCLRankAnnotation, got, tc.want)
		}
	}
	// With pytorch, the rank is pytorch's RANK.
	pt := defaulted(bt.MakeJob("pt", "ns").Plugin("hcclrank").Plugin("pytorch").Task(bt.MakeTask("master", 1)).Task(bt.MakeTask("worker", 2)))
	if got := BuildPod(pt, 1, 1, pluginsOf(t, pt)).Annotations[HCCLRankAnnotation]; got != "2" {
		t.Errorf("worker-1 with pytorch: rank %q, want 2", got)
	}
	// A rank the template gives is kept.
	fixed := defaulted(bt.MakeJob("f", "ns").Plugin("hcclrank").Task(bt.MakeTask("master", 1)))
	fixed.Spec.Tasks[0].Template.Annotations = map[string]string{HCCLRankAnnotation: "7"}
	if got := BuildPod(fixed, 0, 0, pluginsOf(t, fixed)).Annotations[HCCLRankAnnotation]; got != "7" {
		t.Errorf("template's rank replaced: %q", got)
	}
}

func TestSvcPluginWithoutHostsEnv(t *testing.T) {
	j := defaulted(bt.MakeJob("big", "ns").Plugin("svc", "--inject-hosts-env=false").Task(bt.MakeTask("worker", 2)))
	pod := BuildPod(j, 0, 0, pluginsOf(t, j))
	if env := envOf(pod.Spec.Containers[0]); len(env) != 0 {
		t.Errorf("env %v, want none", env)
	}
	if m := pod.Spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].MountPath != SvcMountPath {
		t.Errorf("mounts %v: the hosts files are still mounted", m)
	}
}

func TestSSHPluginOptions(t *testing.T) {
	j := defaulted(bt.MakeJob("s", "ns").Plugin("ssh", "--ssh-port=2022", "--ssh-private-key=PRIV", "--ssh-public-key=PUB", "--ssh-key-file-path=/home/user/.ssh").
		Task(bt.MakeTask("w", 2)))
	j.Spec.Tasks[0].Template.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	plugins := pluginsOf(t, j)
	pod := BuildPod(j, 0, 0, plugins)
	for _, c := range append(pod.Spec.Containers, pod.Spec.InitContainers...) {
		if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/home/user/.ssh" {
			t.Errorf("container %s mounts %v", c.Name, c.VolumeMounts)
		}
	}
	if mode := *pod.Spec.Volumes[0].Secret.DefaultMode; mode != 0o644 {
		t.Errorf("defaultMode %o, want 644 outside /root/.ssh", mode)
	}
	d := plugins[0].Objects(j)[0]
	if err := d.Fill(d.Object); err != nil {
		t.Fatal(err)
	}
	s := d.Object.(*corev1.Secret)
	if string(s.Data[SSHPrivateKey]) != "PRIV" || string(s.Data[SSHPublicKey]) != "PUB" {
		t.Errorf("keys %q/%q, want the given ones", s.Data[SSHPrivateKey], s.Data[SSHPublicKey])
	}
	want := "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\nHost s-w-0\n  HostName s-w-0.s\n  Port 2022\nHost s-w-1\n  HostName s-w-1.s\n  Port 2022\n"
	if got := string(s.Data[SSHConfig]); got != want {
		t.Errorf("config\n%s\nwant\n%s", got, want)
	}
}
