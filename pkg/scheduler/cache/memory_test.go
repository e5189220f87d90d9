package cache_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/cache"
	"github.com/caldera-sh/caldera/pkg/scheduler/podfit"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// BenchmarkCacheMemory reports what the scheduler keeps per pod, beyond
// the pod objects themselves, at the size of the large benchmark (5,000
// nodes, 20,000 running pods): in the cache alone (cache-B/pod) and with
// the cycle's snapshot of it (snapshot-B/pod), with kube-scheduler's
// NodeInfo mirrored on every node as caldera-scheduler keeps it.
func BenchmarkCacheMemory(b *testing.B) {
	const nodes, pods = 5000, 20000
	for range b.N {
		b.StopTimer()
		nodeObjs, podObjs := kwokObjects(nodes, pods)
		base := liveHeap()
		b.StartTimer()
		c := cache.New(cache.Options{SchedulerNames: []string{"caldera"}, NewNodeMirror: podfit.NewNodeMirror})
		c.UpdateQueue(schedtesting.MakeQueue("default").Obj())
		for _, n := range nodeObjs {
			c.UpdateNode(n)
		}
		for _, p := range podObjs {
			c.UpdatePod(p)
		}
		b.StopTimer()
		withCache := liveHeap()
		view := c.NewView()
		snap := view.Snapshot()
		withSnapshot := liveHeap()
		if len(snap.Nodes) != nodes {
			b.Fatalf("snapshot has %d nodes, want %d", len(snap.Nodes), nodes)
		}
		b.ReportMetric(float64(withCache-base)/pods, "cache-B/pod")
		b.ReportMetric(float64(withSnapshot-withCache)/pods, "snapshot-B/pod")
		runtime.KeepAlive(nodeObjs)
		runtime.KeepAlive(podObjs)
		view.Close()
		b.StartTimer()
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// kwokObjects returns nodes and running pods as the scheduler's informers
// hold them in the benchmark: each pod with one container, placed on a
// node, and the status kwok writes.
func kwokObjects(nodes, pods int) ([]*corev1.Node, []*corev1.Pod) {
	now := metav1.NewTime(time.Now())
	ns := make([]*corev1.Node, nodes)
	for i := range ns {
		n := st.MakeNode(fmt.Sprintf("node-%05d", i)).Alloc("cpu", "32", "memory", "256Gi", "pods", "110").
			Label("kubernetes.io/hostname", fmt.Sprintf("node-%05d", i)).Label("type", "kwok").Obj()
		n.Status.Conditions = []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: now, LastTransitionTime: now, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: now, LastTransitionTime: now, Reason: "KubeletHasSufficientMemory"},
		}
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}
		ns[i] = n
	}
	ps := make([]*corev1.Pod, pods)
	for i := range ps {
		p := st.MakePod("bench", fmt.Sprintf("pod-%06d", i)).SchedulerName("caldera").
			Image("registry.k8s.io/pause:3.10").Label("job", fmt.Sprintf("job-%d", i)).
			Req("cpu", "1", "memory", "2Gi").Node(ns[i%nodes].Name).Phase(corev1.PodRunning).Obj()
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
		p.Status.HostIP, p.Status.PodIP, p.Status.StartTime = "10.0.0.1", "10.1.0.1", &now
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: p.Spec.Containers[0].Name, Image: p.Spec.Containers[0].Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}}
		ps[i] = p
	}
	return ns, ps
}
