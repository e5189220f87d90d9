//go:build integration

package job

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controllers/job/core"
)

// TestEveryFrameworkPluginStarts: a Job with each distributed-framework
// plugin, written as Volcano's documentation writes it, runs, and its pods
// carry what the framework reads.
func TestEveryFrameworkPluginStarts(t *testing.T) {
	named := func(ts batchv1alpha1.TaskSpec, container string) batchv1alpha1.TaskSpec {
		ts.Template.Spec.Containers[0].Name = container
		return ts
	}
	for _, tc := range []struct {
		plugin string
		args   []string
		tasks  []batchv1alpha1.TaskSpec
		pod    string // the pod checked
		check  func(p *corev1.Pod) string
		object client.Object // an object the plugin makes, when it does
	}{
		{
			plugin: "mpi", args: []string{"--master=mpimaster", "--worker=mpiworker", "--port=22"},
			tasks: []batchv1alpha1.TaskSpec{task("mpimaster", 1, "", 0), task("mpiworker", 2, "", 0)},
			pod:   "mpimaster-0",
			check: func(p *corev1.Pod) string {
				return wantEnv(p, core.EnvMPIHost, "j-mpiworker-0.j,j-mpiworker-1.j")
			},
			object: &corev1.Secret{}, // ssh, which mpi brings
		},
		{
			plugin: "pytorch", args: []string{"--master=master", "--worker=worker", "--port=23456"},
			tasks: []batchv1alpha1.TaskSpec{task("master", 1, "", 0), task("worker", 2, "", 0)},
			pod:   "worker-1",
			check: func(p *corev1.Pod) string {
				return wantEnv(p, core.EnvMasterAddr, "j-master-0.j") + wantEnv(p, core.EnvWorldSize, "3") + wantEnv(p, core.EnvRank, "2")
			},
		},
		{
			plugin: "tensorflow", args: []string{"--ps=ps", "--worker=worker", "--port=2222"},
			tasks: []batchv1alpha1.TaskSpec{task("ps", 1, "", 0), task("worker", 2, "", 0)},
			pod:   "worker-0",
			check: func(p *corev1.Pod) string {
				return wantEnv(p, core.EnvTFConfig, `{"cluster":{"ps":["j-ps-0.j:2222"],"worker":["j-worker-0.j:2222","j-worker-1.j:2222"]},"task":{"type":"worker","index":0}}`)
			},
		},
		{
			plugin: "ray", args: []string{"--head=head", "--worker=worker", "--port=2345", "--headContainer=ray", "--workerContainer=ray"},
			tasks: []batchv1alpha1.TaskSpec{named(task("head", 1, "", 0), "ray"), named(task("worker", 2, "", 0), "ray")},
			pod:   "worker-0",
			check: func(p *corev1.Pod) string {
				if got := strings.Join(p.Spec.Containers[0].Command, " "); got != "sh -c ray start --block --address=j-head-0.j:2345" {
					return fmt.Sprintf("command %q; ", got)
				}
				return ""
			},
			object: &corev1.Service{},
		},
		{
			plugin: "hcclrank", args: []string{"--master=master", "--worker=worker"},
			tasks: []batchv1alpha1.TaskSpec{task("master", 1, "", 0), task("worker", 2, "", 0)},
			pod:   "worker-1",
			check: func(p *corev1.Pod) string {
				if got := p.Annotations[core.HCCLRankAnnotation]; got != "2" {
					return fmt.Sprintf("%s = %q, want 2; ", core.HCCLRankAnnotation, got)
				}
				return ""
			},
		},
	} {
		t.Run(tc.plugin, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			j := newJob(ns, "j", tc.tasks...)
			j.Spec.Plugins = map[string][]string{tc.plugin: tc.args}
			create(t, j)
			waitPhase(t, ns, "j", batchv1alpha1.JobRunning, time.Minute)
			waitRunningPods(t, ns, "j", 3)
			var p corev1.Pod
			if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "j-" + tc.pod}, &p); err != nil {
				t.Fatal(err)
			}
			if problem := tc.check(&p); problem != "" {
				t.Errorf("pod %s: %s", p.Name, problem)
			}
			if tc.object != nil {
				name := map[string]string{"mpi": "j-ssh", "ray": core.RayHeadService(j)}[tc.plugin]
				if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, tc.object); err != nil {
					t.Errorf("the plugin's %T %s: %v", tc.object, name, err)
				}
			}
		})
	}
}

func wantEnv(p *corev1.Pod, name, want string) string {
	for _, e := range p.Spec.Containers[0].Env {
		if e.Name == name {
			if e.Value != want {
				return fmt.Sprintf("%s = %q, want %q; ", name, e.Value, want)
			}
			return ""
		}
	}
	return fmt.Sprintf("no %s; ", name)
}

// TestPluginExamplesStart: the repository's framework examples run, their
// pods given what the examples say.
func TestPluginExamplesStart(t *testing.T) {
	for _, tc := range []struct {
		file, job, pod string
		check          func(p *corev1.Pod) string
	}{
		{"pytorch-ddp.yaml", "ddp", "ddp-worker-1", func(p *corev1.Pod) string {
			problem := wantEnv(p, core.EnvMasterAddr, "ddp-master-0.ddp") + wantEnv(p, core.EnvRank, "2") + wantEnv(p, core.EnvWorldSize, "3")
			if len(p.Spec.InitContainers) != 1 || p.Spec.InitContainers[0].Name != core.PyTorchWaitContainer {
				problem += fmt.Sprintf("init containers %v; ", p.Spec.InitContainers)
			}
			return problem
		}},
		{"ray-cluster.yaml", "ray", "ray-worker-0", func(p *corev1.Pod) string {
			if got := strings.Join(p.Spec.Containers[0].Command, " "); got != "sh -c ray start --block --address=ray-head-0.ray:6379" {
				return fmt.Sprintf("command %q", got)
			}
			return ""
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			raw, err := os.ReadFile(filepath.Join("../../../../examples/batch", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var j batchv1alpha1.Job
			if err := yaml.UnmarshalStrict(raw, &j); err != nil {
				t.Fatal(err)
			}
			j.Namespace = ns
			create(t, &j)
			waitPhase(t, ns, tc.job, batchv1alpha1.JobRunning, time.Minute)
			waitRunningPods(t, ns, tc.job, 3)
			var p corev1.Pod
			if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: tc.pod}, &p); err != nil {
				t.Fatal(err)
			}
			if problem := tc.check(&p); problem != "" {
				t.Errorf("pod %s: %s", p.Name, problem)
			}
		})
	}
}
