//go:build integration

package scheduler

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controllers/job/core"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

// createNodes creates kwok nodes, deleted when the test ends: other tests'
// queue shares count every node.
func createNodes(t *testing.T, specs []controlplane.NodeSpec) {
	t.Helper()
	if err := controlplane.CreateNodes(t.Context(), fw.Client, specs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range specs {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.Name}}
			if err := fw.Client.Delete(context.Background(), n); client.IgnoreNotFound(err) != nil {
				t.Errorf("deleting node %s: %v", s.Name, err)
			}
		}
	})
}

// createHyperNodes creates HyperNodes, deleted when the test ends.
func createHyperNodes(t *testing.T, hns []*topologyv1alpha1.HyperNode) {
	t.Helper()
	for _, hn := range hns {
		if err := fw.Client.Create(t.Context(), hn); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = client.IgnoreNotFound(fw.Client.Delete(context.Background(), hn.DeepCopy())) })
	}
}

// labelledNodes creates n nodes with cpu cores each, labelled test=<label>,
// so that a test's pods (selecting the label) stay on its own nodes.
func labelledNodes(t *testing.T, label string, n int, cpu string) {
	t.Helper()
	var specs []controlplane.NodeSpec
	for i := range n {
		s := cpuNode(fmt.Sprintf("%s-%d", label, i), cpu)
		s.Labels = map[string]string{"test": label}
		specs = append(specs, s)
	}
	createNodes(t, specs)
}

// podSpec is a one-container pod for the volcano scheduler on the test's nodes.
func podSpec(label, cpu string) corev1.PodSpec {
	return corev1.PodSpec{
		SchedulerName: "volcano",
		NodeSelector:  map[string]string{"test": label},
		Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		}}},
	}
}

func createPod(t *testing.T, ns, name string, annotations map[string]string, spec corev1.PodSpec) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}, Spec: spec}
	if err := fw.Client.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
}

func listPods(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := fw.Client.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// cpuPerNode sums the CPU requests of the pods bound to each node.
func cpuPerNode(pods []corev1.Pod) map[string]int64 {
	out := map[string]int64{}
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		for _, c := range p.Spec.Containers {
			out[p.Spec.NodeName] += c.Resources.Requests.Cpu().MilliValue()
		}
	}
	return out
}

func queue(name string, weight int32, capability corev1.ResourceList) *schedulingv1beta1.Queue {
	return &schedulingv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       schedulingv1beta1.QueueSpec{Weight: weight, Capability: capability},
	}
}

// describePods says where each pod stands, for failure messages.
func describePods(pods []corev1.Pod) string {
	var parts []string
	for _, p := range pods {
		d := fmt.Sprintf("%s: %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName)
		if p.Status.NominatedNodeName != "" {
			d += " nominated " + p.Status.NominatedNodeName
		}
		if p.DeletionTimestamp != nil {
			d += " deleting"
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, "; ")
}

// createExampleJob creates the PodGroup and pods that the job controller
// builds for the Job in the example file (relative to this directory), in
// namespace ns, the pods kept on the nodes labelled test=ns. It returns
// the job and its PodGroup.
func createExampleJob(t *testing.T, ns, path string) (*batchv1alpha1.Job, *schedulingv1beta1.PodGroup) {
	t.Helper()
	return createExampleJobNamed(t, ns, path, "")
}

// createExampleJobNamed is createExampleJob with the Job renamed (name
// empty keeps the file's).
func createExampleJobNamed(t *testing.T, ns, path, name string) (*batchv1alpha1.Job, *schedulingv1beta1.PodGroup) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1alpha1.Job
	if err := yaml.UnmarshalStrict(raw, &job); err != nil {
		t.Fatal(err)
	}
	job.Namespace, job.UID = ns, "example"
	if name != "" {
		job.Name, job.UID = name, types.UID("example-"+name)
	}
	batchv1alpha1.SetDefaults_Job(&job)
	pg := core.BuildPodGroup(&job)
	pg.OwnerReferences = nil
	if err := fw.Client.Create(t.Context(), pg); err != nil {
		t.Fatal(err)
	}
	for ti, task := range job.Spec.Tasks {
		for i := range int(task.Replicas) {
			pod := core.BuildPod(&job, ti, i, nil)
			pod.OwnerReferences = nil
			pod.Spec.NodeSelector = map[string]string{"test": ns}
			pod.Spec.SchedulerName = "volcano"
			if err := fw.Client.Create(t.Context(), pod); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &job, pg
}

// runSchedulerFile runs the scheduler with the configuration file at path
// (relative to this directory) until the test ends.
func runSchedulerFile(t *testing.T, path string) {
	t.Helper()
	stop, err := fw.StartSchedulerFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
}

// waitAllBound waits until namespace ns has n pods, every one bound, and
// returns them.
func waitAllBound(t *testing.T, ns string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	poll.Eventually(t, t.Context(), 60*time.Second, fmt.Sprintf("%d pods bound", n), func() (bool, string) {
		pods = listPods(t, ns)
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				return false, describePods(pods)
			}
		}
		return len(pods) == n, describePods(pods)
	})
	return pods
}

// waitUnschedulable waits until the PodGroup's Unschedulable condition is
// true with a message containing want, and returns the message.
func waitUnschedulable(t *testing.T, pg *schedulingv1beta1.PodGroup, what, want string) string {
	t.Helper()
	var msg string
	poll.Eventually(t, t.Context(), 60*time.Second, what, func() (bool, string) {
		var got schedulingv1beta1.PodGroup
		if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(pg), &got); err != nil {
			return false, err.Error()
		}
		for _, c := range got.Status.Conditions {
			if c.Type == schedulingv1beta1.PodGroupUnschedulableType && c.Status == corev1.ConditionTrue &&
				strings.Contains(c.Message, want) {
				msg = c.Message
				return true, c.Message
			}
		}
		return false, fmt.Sprintf("conditions %+v", got.Status.Conditions)
	})
	return msg
}

// getPod reads the pod ns/name.
func getPod(t *testing.T, ns, name string) (corev1.Pod, error) {
	t.Helper()
	var p corev1.Pod
	err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &p)
	return p, err
}

// podRunning is a poll condition: the pod ns/name is Running.
func podRunning(t *testing.T, ns, name string) func() (bool, string) {
	return func() (bool, string) {
		p, err := getPod(t, ns, name)
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == corev1.PodRunning, fmt.Sprintf("phase %s, node %q", p.Status.Phase, p.Spec.NodeName)
	}
}
