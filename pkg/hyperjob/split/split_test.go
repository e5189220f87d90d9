package split

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/federation/resources"
)

const (
	gpu    = corev1.ResourceName("nvidia.com/gpu")
	ascend = corev1.ResourceName("huawei.com/ascend910b")
)

// free is a cluster with whole units of each resource.
func free(name string, units map[corev1.ResourceName]int64) Cluster {
	r := resources.Amounts{}
	for k, v := range units {
		r[k] = v * 1000
	}
	return Cluster{Name: name, Free: r}
}

// trainer is a replicated job whose workers have 8 GPUs and 32 CPUs each.
func trainer(name string, mode Mode, replicas int32, accelerators int64) ReplicatedJob {
	return ReplicatedJob{Name: name, Mode: mode, Replicas: replicas, Accelerator: gpu, Accelerators: accelerators,
		Fixed: resources.Amounts{}, Pod: resources.Amounts{gpu: 8000, corev1.ResourceCPU: 32000}, PodAccelerators: 8, MinPods: 1}
}

type placed struct {
	Name, Cluster string
	Pods          int32
	Accelerators  int64
}

func placements(p *Plan) []placed {
	var out []placed
	for _, c := range p.Children {
		out = append(out, placed{c.Name, c.Cluster, c.Pods, c.Accelerators})
	}
	return out
}

func TestStaticTwoHalves(t *testing.T) {
	in := &Input{Name: "llm", ReplicatedJobs: []ReplicatedJob{trainer("train", Static, 2, 256)}}
	clusters := []Cluster{free("a", map[corev1.ResourceName]int64{gpu: 128, corev1.ResourceCPU: 1024}), free("b", map[corev1.ResourceName]int64{gpu: 128, corev1.ResourceCPU: 1024})}
	p, err := Split(in, clusters)
	if err != nil {
		t.Fatal(err)
	}
	want := []placed{{"llm-train-0", "a", 16, 128}, {"llm-train-1", "b", 16, 128}}
	if diff := cmp.Diff(want, placements(p)); diff != "" {
		t.Errorf("plan (-want,+got):\n%s", diff)
	}
	if fmt.Sprint(p.Clusters) != "[a b]" {
		t.Errorf("clusters %v", p.Clusters)
	}
	if clusters[0].Free[gpu] != 128000 {
		t.Errorf("Split changed its input: %v", clusters[0].Free)
	}

	// One member full: nothing at all.
	clusters[1].Free[gpu] = 0
	_, err = Split(in, clusters)
	var inf *Infeasible
	if !errors.As(err, &inf) || !strings.Contains(err.Error(), "1 children of cpu 512, nvidia.com/gpu 128 do not fit") {
		t.Errorf("with b full: %v", err)
	}
}

func TestStaticUnevenShare(t *testing.T) {
	in := &Input{Name: "llm", ReplicatedJobs: []ReplicatedJob{trainer("train", Static, 3, 64)}}
	_, err := Split(in, []Cluster{free("a", map[corev1.ResourceName]int64{gpu: 512, corev1.ResourceCPU: 4096})})
	if err == nil || err.Error() != `replicated job "train": 64 nvidia.com/gpu over 3 children is not a whole number of pods of 8 each` {
		t.Errorf("got %v", err)
	}
}

// TestFewestClusters: four 32-GPU children all go to the one cluster that
// holds them, not one to each.
func TestFewestClusters(t *testing.T) {
	in := &Input{Name: "hj", ReplicatedJobs: []ReplicatedJob{trainer("w", Static, 4, 128)}}
	p, err := Split(in, []Cluster{
		free("a", map[corev1.ResourceName]int64{gpu: 128, corev1.ResourceCPU: 1024}),
		free("b", map[corev1.ResourceName]int64{gpu: 256, corev1.ResourceCPU: 1024}),
		free("c", map[corev1.ResourceName]int64{gpu: 64, corev1.ResourceCPU: 1024}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p.Clusters) != "[b]" {
		t.Errorf("clusters %v, want [b]: %v", p.Clusters, placements(p))
	}
}

// TestAuto: 256 GPUs over clusters of 192, 128 and 64 free: the two
// largest, as large as each holds; with maxDomains 1, no plan.
func TestAuto(t *testing.T) {
	clusters := []Cluster{
		free("a", map[corev1.ResourceName]int64{gpu: 192, corev1.ResourceCPU: 4096}),
		free("b", map[corev1.ResourceName]int64{gpu: 128, corev1.ResourceCPU: 4096}),
		free("c", map[corev1.ResourceName]int64{gpu: 64, corev1.ResourceCPU: 4096}),
	}
	in := &Input{Name: "hj", ReplicatedJobs: []ReplicatedJob{trainer("w", Auto, 0, 256)}}
	p, err := Split(in, clusters)
	if err != nil {
		t.Fatal(err)
	}
	want := []placed{{"hj-w-0", "a", 24, 192}, {"hj-w-1", "b", 8, 64}}
	if diff := cmp.Diff(want, placements(p)); diff != "" {
		t.Errorf("plan (-want,+got):\n%s", diff)
	}

	in.MaxDomains = 1
	_, err = Split(in, clusters)
	if err == nil || err.Error() != `replicated job "w": 256 nvidia.com/gpu do not fit: 64 more than the allowed clusters hold in children of at least 1 pods within maxDomains 1` {
		t.Errorf("maxDomains 1: %v", err)
	}
}

// TestAutoLimitedByCPU: a cluster with the GPUs but CPUs for only 2
// workers takes 2; the rest go elsewhere.
func TestAutoLimitedByCPU(t *testing.T) {
	p, err := Split(&Input{Name: "hj", ReplicatedJobs: []ReplicatedJob{trainer("w", Auto, 0, 64)}}, []Cluster{
		free("a", map[corev1.ResourceName]int64{gpu: 64, corev1.ResourceCPU: 64}),
		free("b", map[corev1.ResourceName]int64{gpu: 48, corev1.ResourceCPU: 1024}),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []placed{{"hj-w-0", "a", 2, 16}, {"hj-w-1", "b", 6, 48}}
	if diff := cmp.Diff(want, placements(p)); diff != "" {
		t.Errorf("plan (-want,+got):\n%s", diff)
	}
}

// TestHeterogeneous: one replicated job on NVIDIA GPUs, one on Ascend
// NPUs; each goes where its accelerator is, and maxDomains counts both.
func TestHeterogeneous(t *testing.T) {
	npu := ReplicatedJob{Name: "npu", Mode: Auto, Accelerator: ascend, Accelerators: 32, Fixed: resources.Amounts{},
		Pod: resources.Amounts{ascend: 16000, corev1.ResourceCPU: 64000}, PodAccelerators: 16, MinPods: 1}
	in := &Input{Name: "mix", ReplicatedJobs: []ReplicatedJob{trainer("gpu", Auto, 0, 64), npu}, MaxDomains: 2}
	clusters := []Cluster{
		free("nvidia", map[corev1.ResourceName]int64{gpu: 128, corev1.ResourceCPU: 2048}),
		free("ascend", map[corev1.ResourceName]int64{ascend: 64, corev1.ResourceCPU: 2048}),
	}
	p, err := Split(in, clusters)
	if err != nil {
		t.Fatal(err)
	}
	want := []placed{{"mix-gpu-0", "nvidia", 8, 64}, {"mix-npu-0", "ascend", 2, 32}}
	if diff := cmp.Diff(want, placements(p)); diff != "" {
		t.Errorf("plan (-want,+got):\n%s", diff)
	}
	in.MaxDomains = 1
	if _, err := Split(in, clusters); err == nil || !strings.HasPrefix(err.Error(), `replicated job "npu"`) {
		t.Errorf("maxDomains 1: %v", err)
	}
}

// TestAsWrittenAndAllowedClusters: copies of the template, only where the
// replicated job allows, with a fixed launcher beside scaling workers.
func TestAsWrittenAndAllowedClusters(t *testing.T) {
	eval := ReplicatedJob{Name: "eval", Mode: AsWritten, Replicas: 2, Fixed: resources.Amounts{corev1.ResourceCPU: 4000}, Clusters: []string{"b"}}
	launcher := trainer("train", Static, 1, 16)
	launcher.Fixed = resources.Amounts{corev1.ResourceCPU: 2000}
	p, err := Split(&Input{Name: "hj", ReplicatedJobs: []ReplicatedJob{launcher, eval}}, []Cluster{
		free("a", map[corev1.ResourceName]int64{gpu: 64, corev1.ResourceCPU: 1024}),
		free("b", map[corev1.ResourceName]int64{corev1.ResourceCPU: 16}),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []placed{{"hj-train-0", "a", 2, 16}, {"hj-eval-0", "b", 0, 0}, {"hj-eval-1", "b", 0, 0}}
	if diff := cmp.Diff(want, placements(p)); diff != "" {
		t.Errorf("plan (-want,+got):\n%s", diff)
	}
	if got := p.Children[0].Request; got[corev1.ResourceCPU] != 66000 {
		t.Errorf("launcher and two workers request %v, want 66 CPUs", got)
	}
}

// TestProperties: on random clusters and HyperJobs, a plan never gives a
// cluster more than it has free, never uses more than maxDomains
// clusters, gives each auto replicated job at least its accelerators,
// and is the same every time.
func TestProperties(t *testing.T) {
	feasible := 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		var clusters []Cluster
		for i := range 1 + r.IntN(8) {
			clusters = append(clusters, free(fmt.Sprintf("c%d", i), map[corev1.ResourceName]int64{
				gpu: int64(r.IntN(33) * 8), corev1.ResourceCPU: int64(r.IntN(2048)),
			}))
		}
		in := &Input{Name: "hj", MaxDomains: int32(r.IntN(4))}
		for j := range 1 + r.IntN(3) {
			mode := Mode(r.IntN(3))
			replicas := int32(1 + r.IntN(4))
			rj := trainer(fmt.Sprintf("r%d", j), mode, replicas, int64(replicas)*8*int64(1+r.IntN(8)))
			if mode == AsWritten {
				rj.Fixed = resources.Amounts{gpu: 8000, corev1.ResourceCPU: 8000}
			}
			in.ReplicatedJobs = append(in.ReplicatedJobs, rj)
		}
		p1, err1 := Split(in, clusters)
		p2, err2 := Split(in, clusters)
		if fmt.Sprint(p1, err1) != fmt.Sprint(p2, err2) {
			t.Fatalf("seed %d: not deterministic", seed)
		}
		if err1 != nil {
			var inf *Infeasible
			if !errors.As(err1, &inf) {
				t.Fatalf("seed %d: %v is not an Infeasible", seed, err1)
			}
			continue
		}
		feasible++
		if in.MaxDomains > 0 && len(p1.Clusters) > int(in.MaxDomains) {
			t.Errorf("seed %d: %d clusters, maxDomains %d", seed, len(p1.Clusters), in.MaxDomains)
		}
		used := map[string]resources.Amounts{}
		acc := map[string]int64{}
		for _, c := range p1.Children {
			if used[c.Cluster] == nil {
				used[c.Cluster] = resources.Amounts{}
			}
			used[c.Cluster].Add(c.Request)
			acc[c.ReplicatedJob] += c.Accelerators
		}
		for _, c := range clusters {
			if u := used[c.Name]; u != nil && !u.Fits(c.Free) {
				t.Errorf("seed %d: cluster %s given %v of %v", seed, c.Name, u, c.Free)
			}
		}
		for _, rj := range in.ReplicatedJobs {
			if rj.Mode != AsWritten && acc[rj.Name] < rj.Accelerators {
				t.Errorf("seed %d: %s got %d of %d accelerators", seed, rj.Name, acc[rj.Name], rj.Accelerators)
			}
		}
	}
	// The property holds on plans, so there must be plenty.
	if feasible < 60 {
		t.Errorf("only %d of 300 random HyperJobs had a plan", feasible)
	}
	t.Logf("%d of 300 random HyperJobs had a plan", feasible)
}
