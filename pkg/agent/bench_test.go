package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/caldera-sh/caldera/pkg/agent/cgroup"
	"github.com/caldera-sh/caldera/pkg/agent/config"
	"github.com/caldera-sh/caldera/pkg/agent/metrics"
	"github.com/caldera-sh/caldera/pkg/agent/qos"
)

// BenchmarkTick is one reading of a node with 110 pods (80 online, 30
// offline) in steady state, CPU, burst and memory QoS on: every cgroup
// read and compared, nothing to write or publish. At the default 10 s
// interval the agent's CPU is ns/op divided by 10^10.
func BenchmarkTick(b *testing.B) {
	root := b.TempDir()
	layout := cgroup.Layout{Root: root, Driver: cgroup.Systemd}
	write := func(dir, file, v string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(root, "cpu.stat", "usage_usec 1000\n")
	meminfo := filepath.Join(root, "meminfo")
	write(root, "meminfo", "MemTotal: 67108864 kB\nMemAvailable: 33554432 kB")

	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{ColocationLabel: "true"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
			qos.BatchCPU: resource.MustParse("1000"), qos.BatchMemory: resource.MustParse("1Gi"),
		}},
	}
	objs := []runtime.Object{node, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: config.ConfigMapName},
		Data: map[string]string{config.ConfigMapKey: `{"globalConfig": {"cpuQosConfig": {"enable": true}, "cpuBurstConfig": {"enable": true},
			"memoryQosConfig": {"enable": true}, "overSubscriptionConfig": {"enable": false}}}`},
	}}
	for i := range 110 {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Spec:       corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
				{Name: "c", ContainerID: fmt.Sprintf("containerd://c%d", i)},
			}},
		}
		if i < 30 {
			rl := corev1.ResourceList{qos.BatchCPU: resource.MustParse("1000"), qos.BatchMemory: resource.MustParse("1Gi")}
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl}
		} else {
			rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl}
			p.Annotations = map[string]string{"volcano.sh/enable-quota-burst": "true"}
		}
		objs = append(objs, p)
		dir := layout.Pod(qos.KubeQOS(p), p.UID)
		write(dir, "cpu.stat", "usage_usec 1000\n")
		write(dir, "memory.current", "1048576")
		write(layout.Container(dir, p.Status.ContainerStatuses[0].ContainerID), "cpu.stat", "usage_usec 1000\n")
	}
	cs := fake.NewClientset(objs...)
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := New(cs, record.NewFakeRecorder(100), metrics.New(prometheus.NewRegistry()), clk, Options{
		NodeName: "n", Namespace: "ns", Layout: layout, MemInfo: meminfo, Interval: 10 * time.Second, Resync: time.Hour,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, f := range a.factories {
		f.Start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), a.synced...) {
		b.Fatal("caches did not sync")
	}
	if cfg, ok := a.nodeConfig(ctx, node); !ok || !cfg.CPUQoS {
		b.Fatalf("configuration %+v not in force", cfg)
	}
	// Two readings make the rates and write the settings; the rest find
	// everything in place.
	for range 2 {
		a.Tick(ctx)
		clk.Step(10 * time.Second)
	}
	// Let the node's informer see what the readings published.
	time.Sleep(100 * time.Millisecond)
	cs.ClearActions()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a.Tick(ctx)
		clk.Step(10 * time.Second)
	}
	b.StopTimer()
	if len(cs.Actions()) > 0 {
		for _, act := range cs.Actions() {
			if act.GetVerb() != "list" && act.GetVerb() != "watch" {
				b.Fatalf("steady state made API calls: %v", act)
			}
		}
	}
}
