//go:build integration

package agent

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/agent"
	"github.com/caldera-sh/caldera/pkg/agent/cgroup"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestNodeUsage, on a node that does not colocate, against a cgroup tree
// whose usage the test sets:
//   - the agent publishes the node's NodeUsage, owned by the node, with the
//     node's and each pod's average use over its window;
//   - a change of usage shows in the averages;
//   - a restarted agent waits until its readings cover a report interval
//     before it writes: no report averages fewer readings.
func TestNodeUsage(t *testing.T) {
	const ns, node = "node-usage", "node-usage-node"
	const window, every = 2 * time.Second, 500 * time.Millisecond
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := controlplane.CreateNodes(t.Context(), fw.Client, []controlplane.NodeSpec{{
		Name:     node,
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: *resource.NewQuantity(64*gi, resource.BinarySI)},
	}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = fw.Client.Delete(context.Background(), &metricsv1alpha1.NodeUsage{ObjectMeta: metav1.ObjectMeta{Name: node}})
	})
	k := newKernel(t)
	k.setNodeMemory(64*gi, 20*gi)
	layout := cgroup.Layout{Root: k.root, Driver: cgroup.Systemd}
	web := createPod(t, cs, onlinePod(ns, node, "web", "8", 16*gi))
	webDir := layout.Pod(corev1.PodQOSBurstable, web.UID)
	k.cgroup(webDir)
	k.setCPU(k.root, 3)
	k.setCPU(webDir, 2)
	k.setMemory(webDir, 6*gi)

	report := func(a *agent.Agent) { a.ReportUsage(fw.Client, window, every) }
	stop, _, _ := startAgentWithMetrics(t, cs, node, ns, k, report)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	get := func() (*metricsv1alpha1.NodeUsage, bool) {
		var nu metricsv1alpha1.NodeUsage
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: node}, &nu); err != nil {
			return nil, false
		}
		return &nu, true
	}
	near := func(q resource.Quantity, want float64) bool {
		return math.Abs(q.AsApproximateFloat64()-want) <= 0.05*want
	}
	describe := func(nu *metricsv1alpha1.NodeUsage) string {
		if nu == nil {
			return "no NodeUsage"
		}
		return fmt.Sprintf("window %v, usage %v, pods %v", nu.Window.Duration, nu.Usage, nu.Pods)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the node's usage published over the whole window", func() (bool, string) {
		nu, ok := get()
		if !ok {
			return false, "no NodeUsage"
		}
		ok = nu.Window.Duration == window && near(nu.Usage[corev1.ResourceCPU], 3) && near(nu.Usage[corev1.ResourceMemory], float64(20*gi)) &&
			len(nu.Pods) == 1 && nu.Pods[0].Name == "web" && nu.Pods[0].UID == web.UID &&
			near(nu.Pods[0].Usage[corev1.ResourceCPU], 2) && near(nu.Pods[0].Usage[corev1.ResourceMemory], float64(6*gi))
		return ok, describe(nu)
	})
	nu, _ := get()
	n, err := cs.CoreV1().Nodes().Get(t.Context(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nu.OwnerReferences) != 1 || nu.OwnerReferences[0].UID != n.UID || nu.OwnerReferences[0].Kind != "Node" {
		t.Errorf("owner references %v, want the node %s (%s)", nu.OwnerReferences, node, n.UID)
	}

	// The node gets busier: the average moves to the new rate as the
	// window slides.
	k.setCPU(k.root, 12)
	k.setCPU(webDir, 10)
	poll.Eventually(t, t.Context(), 30*time.Second, "the busier node's average", func() (bool, string) {
		nu, _ := get()
		return nu != nil && near(nu.Usage[corev1.ResourceCPU], 12) && near(nu.Pods[0].Usage[corev1.ResourceCPU], 10), describe(nu)
	})

	// A restarted agent starts with an empty window: every report it
	// writes covers at least a report interval.
	stop()
	stopped = true
	before, _ := get()
	stop, _, _ = startAgentWithMetrics(t, cs, node, ns, k, report)
	stopped = false
	var windows []time.Duration
	poll.Eventually(t, t.Context(), 30*time.Second, "reports of the restarted agent", func() (bool, string) {
		nu, _ := get()
		if nu != nil && nu.ResourceVersion != before.ResourceVersion {
			if len(windows) == 0 || nu.Window.Duration != windows[len(windows)-1] {
				windows = append(windows, nu.Window.Duration)
			}
			before = nu
		}
		return len(windows) > 0 && windows[len(windows)-1] == window, fmt.Sprintf("windows written %v", windows)
	})
	for _, w := range windows {
		if w < every {
			t.Errorf("the restarted agent wrote a report over %v, less than its interval %v (windows %v)", w, every, windows)
		}
	}
}
