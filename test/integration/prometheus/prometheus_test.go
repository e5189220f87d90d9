//go:build prometheus

// Package prometheus proves the usage plugin's Prometheus source against a
// real Prometheus (the opt-in tier make test-prometheus runs; the binary is
// built by hack/build-prometheus.sh): Prometheus scrapes a node exporter's
// metrics from a loopback endpoint, the source's queries read each node's
// CPU and memory in use from it, and the scheduler, configured with
// metricsSource, keeps pods off the node Prometheus says is hot.
package prometheus

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	promsource "github.com/caldera-sh/caldera/pkg/loadaware/prometheus"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

var fw *framework.Framework

var kwokTolerations = []corev1.Toleration{{Key: controlplane.KwokTaint.Key, Operator: corev1.TolerationOpExists}}

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, framework.Options{Kwok: true}, &fw))
}

// exporter serves node exporter metrics for simulated machines of 4 CPUs
// and 16 GiB: each busy by the share of CPU and memory the test sets. The
// idle CPU counters advance with the wall clock, as a machine's do.
type exporter struct {
	mu    sync.Mutex
	start time.Time
	// busy is each machine's CPU and memory share in use.
	busy map[string][2]float64
	// idle is each machine's idle CPU seconds when its share last changed.
	idle map[string]float64
	at   map[string]time.Time
}

const cpus, memTotal = 4, 16 << 30

func (e *exporter) set(node string, cpu, mem float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	if _, ok := e.at[node]; ok {
		e.idle[node] = e.idleAt(node, now)
	}
	e.at[node] = now
	e.busy[node] = [2]float64{cpu, mem}
}

func (e *exporter) idleAt(node string, now time.Time) float64 {
	return e.idle[node] + now.Sub(e.at[node]).Seconds()*cpus*(1-e.busy[node][0])
}

func (e *exporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	var b strings.Builder
	b.WriteString("# TYPE node_cpu_seconds_total counter\n")
	for node := range e.busy {
		// The idle time, split evenly over the CPUs.
		for c := range cpus {
			fmt.Fprintf(&b, "node_cpu_seconds_total{cpu=\"%d\",mode=\"idle\",instance=%q} %.3f\n", c, node, e.idleAt(node, now)/cpus)
		}
	}
	b.WriteString("# TYPE node_memory_MemTotal_bytes gauge\n# TYPE node_memory_MemAvailable_bytes gauge\n")
	for node, busy := range e.busy {
		fmt.Fprintf(&b, "node_memory_MemTotal_bytes{instance=%q} %d\n", node, memTotal)
		fmt.Fprintf(&b, "node_memory_MemAvailable_bytes{instance=%q} %d\n", node, int64((1-busy[1])*memTotal))
	}
	_, _ = w.Write([]byte(b.String()))
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// startPrometheus runs Prometheus scraping the exporter every second and
// returns its address.
func startPrometheus(t *testing.T, exporterAddr string) string {
	t.Helper()
	bin := filepath.Join(fw.BinDir, "prometheus")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no Prometheus binary at %s: build it with hack/build-prometheus.sh (make test-prometheus does)", bin)
	}
	dir := t.TempDir()
	conf := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n- job_name: node\n  honor_labels: true\n  static_configs: [{targets: [%q]}]\n", exporterAddr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	l := listen(t)
	addr := l.Addr().String()
	_ = l.Close()
	logf, err := os.Create(filepath.Join(fw.Dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
	})
	return "http://" + addr
}

// TestPrometheusSource: the source reads each node's use as Prometheus
// computes it from the node exporter's metrics; the scheduler with
// metricsSource keeps a pod off the node Prometheus says is hot, and places
// it there once Prometheus says the node cooled.
func TestPrometheusSource(t *testing.T) {
	const ns = "prometheus"
	hot, cool := ns+"-hot", ns+"-cool"
	e := &exporter{start: time.Now(), busy: map[string][2]float64{}, idle: map[string]float64{}, at: map[string]time.Time{}}
	e.set(hot, 0.9, 0.5)
	e.set(cool, 0.1, 0.25)
	l := listen(t)
	srv := &http.Server{Handler: e}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	address := startPrometheus(t, l.Addr().String())

	src := &promsource.Source{Address: address, Client: &http.Client{Timeout: 10 * time.Second}}
	nodes := map[string]promsource.Capacity{hot: {CPU: cpus * 1000, Memory: memTotal}, cool: {CPU: cpus * 1000, Memory: memTotal}}
	near := func(got, want int64) bool { return math.Abs(float64(got-want)) <= 0.05*float64(want) }
	// The queries average a five-minute rate over five minutes: a series
	// younger than that reads too busy (its rate is divided by the whole
	// window), so the readings settle some ten minutes after the first
	// scrape.
	poll.Eventually(t, t.Context(), 14*time.Minute, "Prometheus has the nodes' usage", func() (bool, string) {
		got, err := src.Read(t.Context(), nodes, time.Now())
		if err != nil {
			return false, err.Error()
		}
		h, c := got[hot], got[cool]
		if h == nil || c == nil {
			return false, fmt.Sprintf("usage %v", got)
		}
		ok := near(h.CPU, 3600) && near(h.Memory, memTotal/2) && near(c.CPU, 400) && near(c.Memory, memTotal/4)
		return ok, fmt.Sprintf("hot %+v, cool %+v", *h, *c)
	})

	// The scheduler reads Prometheus for the usage plugin.
	if err := fw.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	var specs []controlplane.NodeSpec
	for _, name := range []string{hot, cool} {
		specs = append(specs, controlplane.NodeSpec{Name: name, Labels: map[string]string{"test": ns, "node": name},
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(fmt.Sprint(cpus)), corev1.ResourceMemory: *resource.NewQuantity(memTotal, resource.BinarySI)}})
	}
	if err := controlplane.CreateNodes(t.Context(), fw.Client, specs); err != nil {
		t.Fatal(err)
	}
	if err := fw.Client.Create(t.Context(), &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	conf := strings.Replace(framework.SchedulerConfig, "  - name: binpack\n", "  - name: binpack\n  - name: usage\n", 1) +
		fmt.Sprintf("metricsSource:\n  type: prometheus\n  address: %s\n  interval: 2s\n", address)
	stop, err := fw.StartScheduler(conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	pod := func(name, node string) *corev1.Pod {
		if err := fw.Client.Create(t.Context(), &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "default"}}); err != nil {
			t.Fatal(err)
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: name}},
			Spec: corev1.PodSpec{
				SchedulerName: "volcano", NodeSelector: map[string]string{"test": ns, "node": node}, Tolerations: kwokTolerations,
				Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}},
			}}
	}
	node := func(name string) func() (string, error) {
		return func() (string, error) {
			var p corev1.Pod
			err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &p)
			return p.Spec.NodeName, err
		}
	}
	bound := func(name string) func() (bool, string) {
		return func() (bool, string) {
			n, err := node(name)()
			if err != nil {
				return false, err.Error()
			}
			return n != "", fmt.Sprintf("on %q", n)
		}
	}
	// A pod for the cool node is placed: the scheduler has read the usage.
	if err := fw.Client.Create(t.Context(), pod("to-cool", cool)); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), time.Minute, "the pod for the cool node placed", bound("to-cool"))
	if err := fw.Client.Create(t.Context(), pod("to-hot", hot)); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), time.Minute, "the pod for the hot node waits: its CPU usage is above the threshold", func() (bool, string) {
		var pg schedulingv1beta1.PodGroup
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "to-hot"}, &pg); err != nil {
			return false, err.Error()
		}
		for _, c := range pg.Status.Conditions {
			if c.Type == schedulingv1beta1.PodGroupUnschedulableType && strings.Contains(c.Message, "node cpu usage above 80%") {
				return true, c.Message
			}
		}
		return false, fmt.Sprintf("conditions %+v", pg.Status.Conditions)
	})
	if n, _ := node("to-hot")(); n != "" {
		t.Fatalf("the pod for the hot node was placed on %q while its usage is above the threshold", n)
	}
	// The node cools; Prometheus's averages fall below 80% within a few
	// minutes (0.9 → 0.1 from here).
	e.set(hot, 0.1, 0.5)
	poll.Eventually(t, t.Context(), 8*time.Minute, "the pod placed once the hot node cools", bound("to-hot"))
}
