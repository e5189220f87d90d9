package split

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkSplit plans a HyperJob of four replicated jobs (a 1,024-GPU
// auto split, a 512-GPU one on NPUs, 32 static children of 64 GPUs, 16
// evaluators as written) over 100 clusters of mixed accelerators.
func BenchmarkSplit(b *testing.B) {
	var clusters []Cluster
	for i := range 100 {
		units := map[corev1.ResourceName]int64{corev1.ResourceCPU: 8192}
		if i%4 == 3 {
			units[ascend] = int64(16 * (i % 9))
		} else {
			units[gpu] = int64(8 * (4 + i%29))
		}
		clusters = append(clusters, free(fmt.Sprintf("member-%03d", i), units))
	}
	npu := trainer("npu", Auto, 0, 512)
	npu.Accelerator, npu.Pod, npu.PodAccelerators = ascend, map[corev1.ResourceName]int64{ascend: 16000, corev1.ResourceCPU: 64000}, 16
	eval := trainer("eval", AsWritten, 16, 0)
	eval.Fixed = map[corev1.ResourceName]int64{gpu: 8000, corev1.ResourceCPU: 16000}
	in := &Input{Name: "big", ReplicatedJobs: []ReplicatedJob{trainer("pretrain", Auto, 0, 1024), npu, trainer("sft", Static, 32, 2048), eval}}
	b.ReportAllocs()
	var p *Plan
	var err error
	for b.Loop() {
		p, err = Split(in, clusters)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(p.Children)), "children")
	b.ReportMetric(float64(len(p.Clusters)), "clusters")
}

// BenchmarkSplitPools is BenchmarkSplit's GPU jobs selecting a model, over
// 100 clusters whose nodes are known in pools of two models and a CPU
// pool.
func BenchmarkSplitPools(b *testing.B) {
	var clusters []Cluster
	for i := range 100 {
		gpus := int64(8 * (4 + i%29))
		c := free(fmt.Sprintf("member-%03d", i), map[corev1.ResourceName]int64{corev1.ResourceCPU: 8192, gpu: gpus})
		h100 := gpus / int64(1+i%3)
		c.Pools = []Pool{
			{Labels: map[string]string{modelLabel: "H100"}, Free: map[corev1.ResourceName]int64{gpu: h100 * 1000, corev1.ResourceCPU: 4096000}},
			{Labels: map[string]string{modelLabel: "A100"}, Free: map[corev1.ResourceName]int64{gpu: (gpus - h100) * 1000, corev1.ResourceCPU: 2048000}},
			{Labels: map[string]string{}, Free: map[corev1.ResourceName]int64{corev1.ResourceCPU: 2048000}},
		}
		clusters = append(clusters, c)
	}
	pretrain, sft, eval := trainer("pretrain", Auto, 0, 1024), trainer("sft", Static, 32, 1024), trainer("eval", AsWritten, 16, 0)
	pretrain.Selector = map[string]string{modelLabel: "H100"}
	sft.Selector = map[string]string{modelLabel: "A100"}
	eval.Fixed = map[corev1.ResourceName]int64{gpu: 8000, corev1.ResourceCPU: 16000}
	in := &Input{Name: "big", ReplicatedJobs: []ReplicatedJob{pretrain, sft, eval}, PoolLabels: []string{modelLabel}}
	b.ReportAllocs()
	var p *Plan
	var err error
	for b.Loop() {
		p, err = Split(in, clusters)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(p.Children)), "children")
	b.ReportMetric(float64(len(p.Clusters)), "clusters")
}
