//go:build integration

package agent

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/agent"
	"github.com/caldera-sh/caldera/pkg/agent/cgroup"
	"github.com/caldera-sh/caldera/pkg/agent/config"
	"github.com/caldera-sh/caldera/pkg/agent/metrics"
	"github.com/caldera-sh/caldera/pkg/agent/oversub"
	"github.com/caldera-sh/caldera/pkg/agent/qos"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, framework.Options{Kwok: true}, &fw))
}

const gi = int64(1) << 30

// startAgent runs an agent for the node on the kernel's tree until the
// returned function is called.
func startAgent(t *testing.T, cs kubernetes.Interface, node, ns string, k *kernel) (stop func()) {
	t.Helper()
	stop, _, _ = startAgentWithMetrics(t, cs, node, ns, k)
	return stop
}

// startAgentWithMetrics is startAgent that also returns the agent's
// metrics and how many readings (ticks) it has completed. The agent's
// clock is a fake one that the test moves on in step with the kernel, at
// the pace of the real one: each reading sees exactly one interval of CPU
// time, whatever the machine's load.
// Each setup is called on the agent before it starts.
func startAgentWithMetrics(t *testing.T, cs kubernetes.Interface, node, ns string, k *kernel, setup ...func(*agent.Agent)) (stop func(), m *metrics.Metrics, ticks func() int64) {
	t.Helper()
	const interval = 100 * time.Millisecond
	m = metrics.New(prometheus.NewRegistry())
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "caldera-agent", Host: node})
	clk := clocktesting.NewFakeClock(time.Now())
	var ticked atomic.Int64
	a := agent.New(cs, recorder, m, clk, agent.Options{
		NodeName: node, Namespace: ns,
		Layout:  cgroup.Layout{Root: k.root, Driver: cgroup.Systemd},
		MemInfo: k.meminfo(), Interval: interval, Resync: time.Hour,
	})
	for _, f := range setup {
		f(a)
	}
	done := make(chan error, 1)
	go func() {
		if err := a.Start(ctx); err != nil {
			done <- err
			return
		}
		pace := time.NewTicker(interval)
		defer pace.Stop()
		for {
			k.advance(interval)
			clk.Step(interval)
			a.Tick(ctx)
			ticked.Add(1)
			select {
			case <-ctx.Done():
				done <- nil
				return
			case <-pace.C:
			}
		}
	}()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		broadcaster.Shutdown()
	}, m, ticked.Load
}

func batchOf(t *testing.T, cs kubernetes.Interface, node string) (cpu, mem int64, ok bool) {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(t.Context(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, hasCPU := n.Status.Allocatable[qos.BatchCPU]
	m, hasMem := n.Status.Allocatable[qos.BatchMemory]
	return c.Value(), m.Value(), hasCPU && hasMem
}

func tainted(t *testing.T, cs kubernetes.Interface, node string) bool {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(t.Context(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range n.Spec.Taints {
		if tn.Key == agent.EvictingTaint && tn.Effect == corev1.TaintEffectNoSchedule {
			return true
		}
	}
	return false
}

func createPod(t *testing.T, cs kubernetes.Interface, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	out, err := cs.CoreV1().Pods(p.Namespace).Create(t.Context(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func onlinePod(ns, node, name string, cpu string, mem int64) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node, Tolerations: kwokTolerations, Containers: []corev1.Container{{
			Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI),
			}},
		}}},
	}
}

func offlinePod(ns, node, name string, priorityClass string, batchCPU int64, batchMem int64) *corev1.Pod {
	rl := corev1.ResourceList{qos.BatchCPU: *resource.NewQuantity(batchCPU, resource.DecimalSI), qos.BatchMemory: *resource.NewQuantity(batchMem, resource.BinarySI)}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{qos.AnnotationKey: "BE"}},
		Spec: corev1.PodSpec{NodeName: node, PriorityClassName: priorityClass, Tolerations: kwokTolerations, Containers: []corev1.Container{{
			Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl},
		}}},
	}
}

var kwokTolerations = []corev1.Toleration{{Key: controlplane.KwokTaint.Key, Operator: corev1.TolerationOpExists}}

// TestColocation, on a 16-CPU, 64Gi node with an online pod asking for 8
// CPUs and 32Gi and two offline pods, against a cgroup tree whose usage
// the test sets:
//   - batch resources follow the online pod's unused requests;
//   - the offline pods' cgroups get their batch limits, and the class
//     weights once the ConfigMap turns CPU QoS on; a bad ConfigMap is
//     refused with an event and changes nothing;
//   - a CPU spike taints the node and evicts the lower-priority offline
//     pod first, never the online one; the taint goes when usage falls;
//   - a restarted agent rewrites nothing.
func TestColocation(t *testing.T) {
	const ns, node = "colocation", "colocation-node"
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := controlplane.CreateNodes(t.Context(), fw.Client, []controlplane.NodeSpec{{
		Name: node, Labels: map[string]string{agent.ColocationLabel: "true"},
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: *resource.NewQuantity(64*gi, resource.BinarySI)},
	}}); err != nil {
		t.Fatal(err)
	}
	k := newKernel(t)
	k.setNodeMemory(64*gi, 12*gi)
	layout := cgroup.Layout{Root: k.root, Driver: cgroup.Systemd}

	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "colocation-batch-high"}, Value: 100}
	if _, err := cs.SchedulingV1().PriorityClasses().Create(t.Context(), pc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	online := createPod(t, cs, onlinePod(ns, node, "web", "8", 32*gi))
	low := createPod(t, cs, offlinePod(ns, node, "batch-low", "", 2000, 4*gi))
	high := createPod(t, cs, offlinePod(ns, node, "batch-high", pc.Name, 1000, 2*gi))
	onlineDir := layout.Pod(corev1.PodQOSBurstable, online.UID)
	lowDir := layout.Pod(corev1.PodQOSBestEffort, low.UID)
	highDir := layout.Pod(corev1.PodQOSBestEffort, high.UID)
	for _, d := range []string{onlineDir, lowDir, highDir} {
		k.cgroup(d)
	}
	k.setCPU(k.root, 3)
	k.setCPU(onlineDir, 2)
	k.setMemory(onlineDir, 8*gi)

	stop := startAgent(t, cs, node, ns, k)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	// unused 6 CPUs and 24Gi, room enough: 0.6 of it.
	ratio := 0.6
	wantMem := int64(ratio * float64(24*gi))
	poll.Eventually(t, t.Context(), 30*time.Second, "batch resources published", func() (bool, string) {
		cpu, mem, ok := batchOf(t, cs, node)
		return ok && math.Abs(float64(cpu-3600)) <= 360 && mem == wantMem, fmt.Sprintf("batch-cpu %d, batch-memory %d (want about 3600 and %d)", cpu, mem, wantMem)
	})
	// The online pod gets busier: 7 CPUs of its 8 in use lends 0.6 CPU.
	k.setCPU(onlineDir, 7)
	k.setCPU(k.root, 8)
	poll.Eventually(t, t.Context(), 30*time.Second, "batch-cpu withdrawn as online usage grows", func() (bool, string) {
		cpu, _, _ := batchOf(t, cs, node)
		return math.Abs(float64(cpu-600)) <= 120, fmt.Sprintf("batch-cpu %d, want about 600", cpu)
	})
	k.setCPU(onlineDir, 2)
	k.setCPU(k.root, 3)
	poll.Eventually(t, t.Context(), 30*time.Second, "batch-cpu lent again as online usage falls", func() (bool, string) {
		cpu, _, _ := batchOf(t, cs, node)
		return math.Abs(float64(cpu-3600)) <= 360, fmt.Sprintf("batch-cpu %d, want about 3600", cpu)
	})

	// The offline pods are held to their batch limits.
	poll.Eventually(t, t.Context(), 10*time.Second, "offline pods limited", func() (bool, string) {
		got := fmt.Sprintf("%s | %s | %s | %s", k.read(lowDir, "cpu.max"), k.read(lowDir, "memory.max"), k.read(highDir, "cpu.max"), k.read(onlineDir, "cpu.max"))
		return got == fmt.Sprintf("200000 100000 | %d | 100000 100000 | max 100000", 4*gi), got
	})
	if w := k.read(onlineDir, "cpu.weight"); w != "100" {
		t.Errorf("online pod's cpu.weight %s before CPU QoS is on, want the kubelet's 100 left alone", w)
	}

	// A ConfigMap turns CPU QoS on; one with ratio 1.5 is refused.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: config.ConfigMapName},
		Data: map[string]string{config.ConfigMapKey: `{"globalConfig": {"cpuQosConfig": {"enable": true}}}`}}
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 10*time.Second, "class weights", func() (bool, string) {
		got := fmt.Sprintf("%s %s %s", k.read(onlineDir, "cpu.weight"), k.read(lowDir, "cpu.weight"), k.read(lowDir, "cpu.idle"))
		return got == "500 1 1", got
	})
	cm.Data[config.ConfigMapKey] = `{"globalConfig": {"cpuQosConfig": {"enable": false}, "overSubscriptionConfig": {"ratio": 1.5}}}`
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 10*time.Second, "the bad configuration refused with an event", func() (bool, string) {
		evs, err := cs.CoreV1().Events("").List(t.Context(), metav1.ListOptions{FieldSelector: "reason=InvalidColocationConfig"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == node && strings.Contains(e.Message, "globalConfig.overSubscriptionConfig.ratio: Invalid value: 1.5: must be greater than 0 and at most 1") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})
	if w := k.read(onlineDir, "cpu.weight"); w != "500" {
		t.Errorf("cpu.weight %s after the bad configuration, want 500: the last valid one stays", w)
	}

	// An idle node's readings hold still (a busy one's jitter with the
	// simulated kernel's 5 ms steps), so that what the restarted agent
	// reads is what was published: the online pod lends 60% of its 8 CPUs.
	k.setCPU(onlineDir, 0)
	k.setCPU(k.root, 0)
	// Settled: the published loan is within the agent's own update
	// threshold of what an idle node lends, so that no later reading of
	// this agent, nor the restarted agent's first, is worth publishing.
	poll.Eventually(t, t.Context(), 30*time.Second, "batch-cpu settled at what an idle online pod lends", func() (bool, string) {
		cpu, mem, _ := batchOf(t, cs, node)
		published := oversub.Amounts{CPU: cpu, Memory: mem}
		return !oversub.Worth(published, oversub.Amounts{CPU: 4800, Memory: mem}), fmt.Sprintf("batch-cpu %d, want 4800 within a tenth", cpu)
	})

	// A restart rewrites nothing.
	stop()
	stopped = true
	mtimes := map[string]time.Time{}
	for _, d := range []string{onlineDir, lowDir, highDir} {
		for _, f := range []string{"cpu.weight", "cpu.idle", "cpu.max", "memory.max"} {
			st, err := os.Stat(filepath.Join(d, f))
			if err != nil {
				t.Fatal(err)
			}
			mtimes[filepath.Join(d, f)] = st.ModTime()
		}
	}
	beforeCPU, beforeMem, _ := batchOf(t, cs, node)
	var m *metrics.Metrics
	var ticks func() int64
	stop, m, ticks = startAgentWithMetrics(t, cs, node, ns, k)
	stopped = false
	// Ten readings, a second of the agent's time: from the second on it
	// has the node's usage, so each decides what to publish and every
	// reading sets the cgroups.
	poll.Eventually(t, t.Context(), 30*time.Second, "ten readings by the restarted agent", func() (bool, string) {
		n := ticks()
		return n >= 10, fmt.Sprintf("%d readings", n)
	})
	if n := testutil.CollectAndCount(m.NodeUsage); n != 2 {
		t.Fatalf("the restarted agent reports %d node usages, want 2 (cpu and memory): it has not read the node's usage", n)
	}
	for path, was := range mtimes {
		if st, _ := os.Stat(path); !st.ModTime().Equal(was) {
			t.Errorf("%s rewritten after a restart", path)
		}
	}
	if cpu, mem, _ := batchOf(t, cs, node); cpu != beforeCPU || mem != beforeMem {
		t.Errorf("batch resources %d/%d after a restart, were %d/%d", cpu, mem, beforeCPU, beforeMem)
	}

	// A CPU spike: 14 of 16 CPUs (87%) is above the 80% watermark.
	k.setCPU(k.root, 14)
	poll.Eventually(t, t.Context(), 30*time.Second, "the node tainted and the low-priority offline pod evicted", func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(t.Context(), low.Name, metav1.GetOptions{})
		gone := err != nil || p.DeletionTimestamp != nil
		return gone && tainted(t, cs, node), fmt.Sprintf("batch-low gone %v, tainted %v", gone, tainted(t, cs, node))
	})
	if p, err := cs.CoreV1().Pods(ns).Get(t.Context(), high.Name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("batch-high evicted within the minimum interval of the first eviction")
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "batch-high evicted next", func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(t.Context(), high.Name, metav1.GetOptions{})
		return err != nil || p.DeletionTimestamp != nil, "batch-high still there"
	})
	k.setCPU(k.root, 2)
	poll.Eventually(t, t.Context(), 30*time.Second, "taint removed under the low watermarks", func() (bool, string) {
		return !tainted(t, cs, node), "still tainted"
	})
	if n := testutil.ToFloat64(m.Evictions.WithLabelValues("cpu")); n != 2 {
		t.Errorf("caldera_agent_evictions_total{resource=cpu} = %v, want 2", n)
	}
	if u := testutil.ToFloat64(m.NodeUsage.WithLabelValues("memory")); u != float64(12*gi) {
		t.Errorf("caldera_agent_node_usage{resource=memory} = %v, want %d", u, 12*gi)
	}
	if p, err := cs.CoreV1().Pods(ns).Get(t.Context(), online.Name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("the online pod was evicted: %v", err)
	}

	// A pod with a QoS level the agent does not know is told so.
	odd := onlinePod(ns, node, "odd", "100m", gi)
	odd.Annotations = map[string]string{qos.AnnotationKey: "gold"}
	createPod(t, cs, odd)
	poll.Eventually(t, t.Context(), 10*time.Second, "UnknownQoSLevel event", func() (bool, string) {
		evs, err := cs.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "reason=UnknownQoSLevel,involvedObject.name=odd"})
		if err != nil || len(evs.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		want := `annotation volcano.sh/qos-level: unknown QoS level "gold" (known: LC, HLS, LS, BE); treated as LS`
		return evs.Items[0].Message == want, evs.Items[0].Message
	})
	evs, err := cs.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "reason=Evicted,involvedObject.name=batch-low"})
	if err != nil || len(evs.Items) == 0 || !strings.Contains(evs.Items[0].Message, "cpu usage") || !strings.Contains(evs.Items[0].Message, "high watermark 80%") {
		t.Errorf("eviction event of batch-low: %+v, %v", evs, err)
	}
}

// TestOfflinePodsFitTheLoan: the scheduler places offline pods against
// the batch resources the agent publishes: on a node lending 3.6 CPUs, a
// pod asking for 3 is bound and a second one waits.
func TestOfflinePodsFitTheLoan(t *testing.T) {
	const ns, node = "loan", "loan-node"
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := controlplane.CreateNodes(t.Context(), fw.Client, []controlplane.NodeSpec{{
		Name: node, Labels: map[string]string{agent.ColocationLabel: "true", "test": ns},
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: *resource.NewQuantity(64*gi, resource.BinarySI)},
	}}); err != nil {
		t.Fatal(err)
	}
	k := newKernel(t)
	k.setNodeMemory(64*gi, 12*gi)
	online := createPod(t, cs, onlinePod(ns, node, "web", "8", 32*gi))
	dir := cgroup.Layout{Root: k.root, Driver: cgroup.Systemd}.Pod(corev1.PodQOSBurstable, online.UID)
	k.cgroup(dir)
	k.setCPU(k.root, 3)
	k.setCPU(dir, 2)
	k.setMemory(dir, 8*gi)
	defer startAgent(t, cs, node, ns, k)()
	poll.Eventually(t, t.Context(), 30*time.Second, "batch resources published", func() (bool, string) {
		cpu, _, ok := batchOf(t, cs, node)
		return ok && cpu >= 3240, fmt.Sprintf("batch-cpu %d", cpu)
	})

	stopScheduler, err := fw.StartScheduler(framework.SchedulerConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stopScheduler(); err != nil {
			t.Error(err)
		}
	}()
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}
	if err := fw.Client.Create(t.Context(), q); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	// The loan follows measured usage and wobbles around 3.6 CPUs, so
	// etl-1 may be refused in a cycle that sees a dip; it must be bound
	// once the loan is back. etl-2 would need 6 CPUs, which the loan
	// never reaches: it must be refused for batch-cpu and stay unbound.
	for _, name := range []string{"etl-1", "etl-2"} {
		pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1}}
		if err := fw.Client.Create(t.Context(), pg); err != nil {
			t.Fatal(err)
		}
		p := offlinePod(ns, "", name, "", 3000, 4*gi)
		p.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] = name
		p.Spec.SchedulerName = "volcano"
		p.Spec.NodeSelector = map[string]string{"test": ns}
		createPod(t, cs, p)
		poll.Eventually(t, t.Context(), 30*time.Second, name+" decided", func() (bool, string) {
			var cur schedulingv1beta1.PodGroup
			_ = fw.Client.Get(t.Context(), client.ObjectKeyFromObject(pg), &cur)
			got, _ := cs.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
			if got.Spec.NodeName != "" {
				return true, ""
			}
			if name == "etl-1" {
				return false, fmt.Sprintf("etl-1 not bound; conditions %+v", cur.Status.Conditions)
			}
			for _, c := range cur.Status.Conditions {
				if c.Type == schedulingv1beta1.PodGroupUnschedulableType && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "kubernetes.io/batch-cpu") {
					return true, ""
				}
			}
			return false, fmt.Sprintf("node %q, conditions %+v", got.Spec.NodeName, cur.Status.Conditions)
		})
	}
	first, _ := cs.CoreV1().Pods(ns).Get(t.Context(), "etl-1", metav1.GetOptions{})
	second, _ := cs.CoreV1().Pods(ns).Get(t.Context(), "etl-2", metav1.GetOptions{})
	if first.Spec.NodeName != node || second.Spec.NodeName != "" {
		t.Errorf("etl-1 on %q, etl-2 on %q; want etl-1 on %s and etl-2 waiting for batch-cpu", first.Spec.NodeName, second.Spec.NodeName, node)
	}
}
