package split

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
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
		{Name: "trainer-910b", Mode: AsWritten, Replicas: 1, Fixed: dispatch.Resources{ascend: 64000}, Pod: dispatch.Resources{}, MinPods: 1,
			Clusters: []string{"cluster-ascend-910b-1", "cluster-ascend-910b-2"}},
		{Name: "trainer-gpu", Mode: Auto, Replicas: 2, Accelerator: gpu, Accelerators: 128, Fixed: dispatch.Resources{},
			Pod: dispatch.Resources{gpu: 8000}, PodAccelerators: 8, MinPods: 1},
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

// TestRestrictByLabels: a replicated job selecting H100 nodes goes to the
// members labelled with that model; a selector key no member carries
// restricts nothing.
func TestRestrictByLabels(t *testing.T) {
	gpus := corev1.ResourceList{gpu: resource.MustParse("8")}
	rj := func(name, model string) trainingv1alpha1.ReplicatedJob {
		return trainingv1alpha1.ReplicatedJob{Name: name, Replicas: 1, SplitPolicy: &trainingv1alpha1.SplitPolicy{Mode: trainingv1alpha1.SplitModeAuto,
			Accelerators: new(int32(64)), AcceleratorType: new(string(gpu))},
			TemplateSpec: batchv1alpha1.JobSpec{Tasks: []batchv1alpha1.TaskSpec{{Name: "w", Replicas: 8, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"nvidia.com/gpu.product": model, "disk": "ssd"},
				Containers:   []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: gpus, Limits: gpus}}},
			}}}}}}
	}
	hj := &trainingv1alpha1.HyperJob{Spec: trainingv1alpha1.HyperJobSpec{ReplicatedJobs: []trainingv1alpha1.ReplicatedJob{rj("h", "H100"), rj("a", "A100")}}}
	in, err := FromHyperJob(hj)
	if err != nil {
		t.Fatal(err)
	}
	RestrictByLabels(in, hj, map[string]map[string]string{
		"east": {"nvidia.com/gpu.product": "H100"}, "west": {"nvidia.com/gpu.product": "A100"}, "south": {"nvidia.com/gpu.product": "H100"},
	})
	if got := fmt.Sprint(in.ReplicatedJobs[0].Clusters, in.ReplicatedJobs[1].Clusters); got != "[east south] [west]" {
		t.Errorf("clusters %s", got)
	}
	p, err := Split(in, []Cluster{
		free("east", map[corev1.ResourceName]int64{gpu: 64}), free("west", map[corev1.ResourceName]int64{gpu: 128}), free("south", map[corev1.ResourceName]int64{gpu: 32}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]placed{{"-h-0", "east", 8, 64}, {"-a-0", "west", 8, 64}}, placements(p)); diff != "" {
		t.Errorf("plan (-want,+got):\n%s", diff)
	}
}
