package split

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/federation/resources"
)

func exampleHyperJob(t *testing.T) *trainingv1alpha1.HyperJob {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "training", "hyperjob.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	hj := &trainingv1alpha1.HyperJob{}
	if err := yaml.UnmarshalStrict(raw, hj); err != nil {
		t.Fatal(err)
	}
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	return hj
}

// TestExampleHyperJob: the documented example, planned over an Ascend
// cluster and two GPU clusters of 80 and 64 free GPUs: the Ascend child
// as written in its listed cluster, the GPU job as one child of 80 GPUs
// (10 workers) and one of 48 (6), gangs following.
func TestExampleHyperJob(t *testing.T) {
	hj := exampleHyperJob(t)
	in, err := FromHyperJob(hj)
	if err != nil {
		t.Fatal(err)
	}
	wantIn := &Input{Name: "llm-training", MaxDomains: 3, ReplicatedJobs: []ReplicatedJob{
		{Name: "trainer-910b", Mode: AsWritten, Replicas: 1, Fixed: resources.Amounts{ascend: 64000}, Pod: resources.Amounts{}, MinPods: 1,
			Clusters: []string{"cluster-ascend-910b-1", "cluster-ascend-910b-2"}},
		{Name: "trainer-gpu", Mode: Auto, Replicas: 2, Accelerator: gpu, Accelerators: 128, Fixed: resources.Amounts{},
			Pod: resources.Amounts{gpu: 8000}, PodAccelerators: 8, MinPods: 1},
	}}
	if diff := cmp.Diff(wantIn, in); diff != "" {
		t.Fatalf("input (-want,+got):\n%s", diff)
	}
	plan, err := Split(in, []Cluster{
		free("cluster-ascend-910b-2", map[corev1.ResourceName]int64{ascend: 64}),
		free("gpu-east", map[corev1.ResourceName]int64{gpu: 80}),
		free("gpu-west", map[corev1.ResourceName]int64{gpu: 64}),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []placed{
		{"llm-training-trainer-910b-0", "cluster-ascend-910b-2", 0, 0},
		{"llm-training-trainer-gpu-0", "gpu-east", 10, 80},
		{"llm-training-trainer-gpu-1", "gpu-west", 6, 48},
	}
	if diff := cmp.Diff(want, placements(plan)); diff != "" {
		t.Fatalf("plan (-want,+got):\n%s", diff)
	}
	for i, wantPods := range map[int]int32{0: 8, 1: 10, 2: 6} {
		c := plan.Children[i]
		rj := &hj.Spec.ReplicatedJobs[0]
		if c.ReplicatedJob == "trainer-gpu" {
			rj = &hj.Spec.ReplicatedJobs[1]
		}
		spec := ChildSpec(rj, &c)
		if spec.Tasks[0].Replicas != wantPods || *spec.Tasks[0].MinAvailable != wantPods || spec.MinAvailable != wantPods {
			t.Errorf("%s: replicas %d, task minAvailable %d, minAvailable %d, want all %d",
				c.Name, spec.Tasks[0].Replicas, *spec.Tasks[0].MinAvailable, spec.MinAvailable, wantPods)
		}
	}
	if hj.Spec.ReplicatedJobs[1].TemplateSpec.Tasks[0].Replicas != 8 {
		t.Errorf("ChildSpec changed the template")
	}
}

// TestChildSpecKeepsSmallerGangs: a launcher and workers of which 4 must
// run; a child of 2 workers needs both, a child of 12 still 4.
func TestChildSpecKeepsSmallerGangs(t *testing.T) {
	gpus := corev1.ResourceList{gpu: resource.MustParse("8")}
	rj := &trainingv1alpha1.ReplicatedJob{
		Name: "w", Replicas: 2,
		SplitPolicy: &trainingv1alpha1.SplitPolicy{Mode: trainingv1alpha1.SplitModeStatic, Accelerators: new(int32(32)), AcceleratorType: new(string(gpu))},
		TemplateSpec: batchv1alpha1.JobSpec{MinAvailable: 5, Tasks: []batchv1alpha1.TaskSpec{
			{Name: "launcher", Replicas: 1, MinAvailable: new(int32(1)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "l"}}}}},
			{Name: "worker", Replicas: 8, MinAvailable: new(int32(4)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "w",
				Resources: corev1.ResourceRequirements{Requests: gpus, Limits: gpus}}}}}},
		}},
	}
	for pods, want := range map[int32][2]int32{2: {2, 3}, 12: {4, 5}} {
		spec := ChildSpec(rj, &Child{Pods: pods})
		w := spec.Tasks[1]
		if w.Replicas != pods || *w.MinAvailable != want[0] || spec.MinAvailable != want[1] {
			t.Errorf("%d pods: replicas %d, task minAvailable %d, minAvailable %d, want %d, %d, %d",
				pods, w.Replicas, *w.MinAvailable, spec.MinAvailable, pods, want[0], want[1])
		}
	}
	in, err := FromHyperJob(&trainingv1alpha1.HyperJob{Spec: trainingv1alpha1.HyperJobSpec{ReplicatedJobs: []trainingv1alpha1.ReplicatedJob{*rj}}})
	if err != nil {
		t.Fatal(err)
	}
	if rj := in.ReplicatedJobs[0]; rj.Mode != Static || rj.PodAccelerators != 8 || len(rj.Fixed) != 0 && rj.Fixed[gpu] != 0 {
		t.Errorf("input %+v", rj)
	}
}

// modelJob is a HyperJob of one auto-split replicated job per model
// given, each of 64 GPUs in pods of 8 selecting nodes of the model.
func modelJob(t *testing.T, models ...string) *Input {
	t.Helper()
	gpus := corev1.ResourceList{gpu: resource.MustParse("8")}
	hj := &trainingv1alpha1.HyperJob{}
	for _, model := range models {
		hj.Spec.ReplicatedJobs = append(hj.Spec.ReplicatedJobs, trainingv1alpha1.ReplicatedJob{Name: strings.ToLower(model), Replicas: 1,
			SplitPolicy: &trainingv1alpha1.SplitPolicy{Mode: trainingv1alpha1.SplitModeAuto, Accelerators: new(int32(64)), AcceleratorType: new(string(gpu))},
			TemplateSpec: batchv1alpha1.JobSpec{Tasks: []batchv1alpha1.TaskSpec{{Name: "w", Replicas: 8, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				NodeSelector: map[string]string{modelLabel: model, "disk": "ssd"},
				Containers:   []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: gpus, Limits: gpus}}},
			}}}}}})
	}
	in, err := FromHyperJob(hj)
	if err != nil {
		t.Fatal(err)
	}
	in.PoolLabels = []string{modelLabel}
	return in
}

const modelLabel = "nvidia.com/gpu.product"

// TestSelectorByClusterLabels: without node pools, a replicated job
// selecting H100 nodes goes to the members labelled with that model; a
// selector key no member carries (disk) restricts nothing.
func TestSelectorByClusterLabels(t *testing.T) {
	in := modelJob(t, "H100", "A100")
	if got := fmt.Sprint(in.ReplicatedJobs[0].Selector); got != "map[disk:ssd nvidia.com/gpu.product:H100]" {
		t.Errorf("selector %s", got)
	}
	labelled := func(name, model string, gpus int64) Cluster {
		c := free(name, map[corev1.ResourceName]int64{gpu: gpus})
		c.Labels = map[string]string{modelLabel: model}
		return c
	}
	p, err := Split(in, []Cluster{labelled("east", "H100", 64), labelled("west", "A100", 128), labelled("south", "H100", 32)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]placed{{"-h100-0", "east", 8, 64}, {"-a100-0", "west", 8, 64}}, placements(p)); diff != "" {
		t.Errorf("plan (-want,+got):\n%s", diff)
	}
	// No A100 member: none allowed, said so.
	_, err = Split(in, []Cluster{labelled("east", "H100", 640)})
	if err == nil || !strings.Contains(err.Error(), `replicated job "a100": 64 nvidia.com/gpu do not fit`) {
		t.Errorf("without A100 members: %v", err)
	}
}

// TestSelectorByNodePools: members with both models in node pools give
// each replicated job the free GPUs of its model only, never more than
// the member has free, and what one child takes from a pool the next
// does not see.
func TestSelectorByNodePools(t *testing.T) {
	mixed := func(name string, h100, a100, total int64) Cluster {
		c := free(name, map[corev1.ResourceName]int64{gpu: total})
		// The cluster's own label says H100: the pools, known, decide.
		c.Labels = map[string]string{modelLabel: "H100"}
		c.Pools = []Pool{
			{Labels: map[string]string{modelLabel: "H100"}, Free: resources.Amounts{gpu: h100 * 1000}},
			{Labels: map[string]string{modelLabel: "A100"}, Free: resources.Amounts{gpu: a100 * 1000}},
			{Labels: map[string]string{}, Free: resources.Amounts{gpu: 1000 * 1000}},
		}
		return c
	}
	in := modelJob(t, "H100", "A100")
	// a: 48 H100 and 16 A100 free; b: 16 H100, 48 A100. The H100 job
	// takes 48 in a and 16 in b; the A100 job 48 in b and 16 in a.
	p, err := Split(in, []Cluster{mixed("a", 48, 16, 64), mixed("b", 16, 48, 64)})
	if err != nil {
		t.Fatal(err)
	}
	want := []placed{{"-h100-0", "a", 6, 48}, {"-h100-1", "b", 2, 16}, {"-a100-0", "b", 6, 48}, {"-a100-1", "a", 2, 16}}
	if diff := cmp.Diff(want, placements(p)); diff != "" {
		t.Errorf("plan (-want,+got):\n%s", diff)
	}
	// The cluster's free bounds its pools: 64 H100 free in pools, 40 in
	// all.
	in = modelJob(t, "H100")
	_, err = Split(in, []Cluster{mixed("a", 64, 0, 40)})
	if err == nil || !strings.Contains(err.Error(), "24 more than the allowed clusters hold") {
		t.Errorf("pools beyond the cluster's free: %v", err)
	}
	// A fixed-size child short of its model says where it looked.
	in = modelJob(t, "A100")
	in.ReplicatedJobs[0].Mode, in.ReplicatedJobs[0].Replicas = Static, 1
	_, err = Split(in, []Cluster{mixed("a", 64, 32, 96)})
	if err == nil || !strings.Contains(err.Error(), "is short of nvidia.com/gpu 32 on nodes with nvidia.com/gpu.product=A100") {
		t.Errorf("static child short of A100: %v", err)
	}
	// A member whose pools are unknown falls back to its labels.
	c := mixed("c", 0, 0, 64)
	c.Pools, c.Labels = nil, map[string]string{modelLabel: "A100"}
	p, err = Split(modelJob(t, "A100"), []Cluster{mixed("a", 64, 0, 64), c})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]placed{{"-a100-0", "c", 8, 64}}, placements(p)); diff != "" {
		t.Errorf("plan (-want,+got):\n%s", diff)
	}
}
