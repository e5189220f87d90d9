//go:build integration

package federation

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/federation/clusterapi"
	clusterv1beta2 "github.com/caldera-sh/caldera/pkg/federation/clusterapi/v1beta2"
	dispatchcontroller "github.com/caldera-sh/caldera/pkg/federation/dispatch/controller"
	"github.com/caldera-sh/caldera/pkg/federation/inventory"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	"github.com/caldera-sh/caldera/test/poll"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// TestClusterAPIInventory: the API server plays the Cluster API
// management cluster, Karmada, and the workload cluster capi-a (whose
// kubeconfig Secret points back at it). capi-a is Provisioned and joined
// to Karmada: it is Ready, with the GPUs of its Ready, schedulable node as
// allocatable, a bound pod's as allocated and an unbound pod's as
// allocating. capi-b is still provisioning, capi-c has no kubeconfig:
// neither is Ready, each says why. The dispatcher, reading this
// inventory, releases a 4-GPU job to capi-a and holds a 2-GPU one, with
// one GPU left. When Karmada forgets capi-a, it is no longer Ready.
func TestClusterAPIInventory(t *testing.T) {
	const ns = "fleet"
	ctx := t.Context()
	c := fw.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := os.ReadFile(fw.Cluster.APIServer.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	// The management cluster's view.
	for name, provisioned := range map[string]bool{"capi-a": true, "capi-b": false, "capi-c": true} {
		cl := &clusterv1beta2.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		cl.Status.Phase = clusterv1beta2.ClusterPhaseProvisioning
		if provisioned {
			cl.Status.Phase = clusterv1beta2.ClusterPhaseProvisioned
			cl.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		}
		if err := c.Status().Update(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"capi-a", "capi-b"} {
		if err := c.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterapi.KubeconfigSecretName(name), Labels: map[string]string{inventory.ClusterNameLabel: name}},
			Data:       map[string][]byte{clusterapi.KubeconfigSecretKey: kubeconfig},
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Karmada's: capi-a is joined, with no summary of its own.
	joined := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "capi-a", Labels: map[string]string{"accelerator": "h100"}}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
	if err := c.Create(ctx, joined); err != nil {
		t.Fatal(err)
	}
	// The workload cluster's: a Ready node of 8 GPUs, a cordoned one, a
	// bound pod of 2 GPUs and an unbound one of 1.
	for name, cordoned := range map[string]bool{"capi-node-0": false, "capi-node-1": true} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: cordoned}}
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		n.Status.Allocatable = corev1.ResourceList{gpu: resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("64")}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		if err := c.Status().Update(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	for name, node := range map[string]string{"trainer": "capi-node-0", "waiting": ""} {
		want := "2"
		if node == "" {
			want = "1"
		}
		rl := corev1.ResourceList{gpu: resource.MustParse(want)}
		if err := c.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}}},
		}); err != nil {
			t.Fatal(err)
		}
	}

	rctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
	defer cancel()
	named, err := labels.NewRequirement(inventory.ClusterNameLabel, selection.Exists, nil)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := cache.New(fw.RESTConfig(), cache.Options{Scheme: fw.Scheme,
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: labels.NewSelector().Add(*named)}}})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := cache.New(fw.RESTConfig(), cache.Options{Scheme: fw.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = mc.Start(rctx) }()
	go func() { _ = kc.Start(rctx) }()
	inv := &inventory.ClusterAPI{Management: mc, ManagementReader: mc, Karmada: kc, KarmadaReader: kc, Namespace: ns, ProbeInterval: time.Second}
	dc, err := client.New(fw.RESTConfig(), client.Options{Scheme: fw.Scheme, Cache: &client.CacheOptions{Reader: kc}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	metrics, err := dispatchcontroller.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	// decisions counts the dispatcher's decisions so far.
	decisions := func() float64 {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0.0
		for _, f := range families {
			if f.GetName() == "caldera_global_decisions_total" {
				for _, m := range f.GetMetric() {
					n += m.GetCounter().GetValue()
				}
			}
		}
		return n
	}
	d := dispatchcontroller.New(dc, kc, record.NewFakeRecorder(100), clock.RealClock{}, dispatchcontroller.Options{Heartbeat: time.Second, Inventory: inv, Metrics: metrics})
	done := make(chan error, 1)
	go func() { done <- d.Run(rctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	state := func() map[string]string {
		out := map[string]string{}
		cls, err := inv.Clusters(ctx)
		if err != nil {
			// Not started yet.
			return map[string]string{"error": err.Error()}
		}
		for _, cl := range cls {
			cond := cl.Status.Conditions[0]
			s := fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
			if rs := cl.Status.ResourceSummary; rs != nil && cond.Status == metav1.ConditionTrue {
				s += fmt.Sprintf("; gpu %s/%s/%s, labels %v", ptr.To(rs.Allocatable[gpu]), ptr.To(rs.Allocated[gpu]), ptr.To(rs.Allocating[gpu]), cl.Labels)
			}
			out[cl.Name] = s
		}
		return out
	}
	want := map[string]string{
		"capi-a": "True ClusterAPIMemberReady: provisioned, reachable and joined; gpu 8/2/1, labels map[accelerator:h100]",
		"capi-b": "False NotProvisioned: Cluster API cluster fleet/capi-b is Provisioning, control plane initialized false",
		"capi-c": `False NoKubeconfig: no kubeconfig in Secret fleet/capi-c-kubeconfig key "value"`,
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the inventory's clusters", func() (bool, string) {
		got := state()
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
	})

	// Dispatch reads it: 5 GPUs free in capi-a.
	if err := c.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	// gpu-0 goes first: its priority is higher.
	first := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "fleet-first"}, Value: 100}
	if err := c.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), first) })
	for i, gpus := range []string{"2", "1"} {
		name := fmt.Sprintf("gpu-%d", i)
		j := job(ns, name, "fleet")
		if i == 0 {
			j.Spec.PriorityClassName = first.Name
		}
		if err := c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		rb := binding(ns, name)
		rb.Spec.Components[0].ReplicaRequirements.ResourceRequest = corev1.ResourceList{gpu: resource.MustParse(gpus)}
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "the 4-GPU job released to capi-a, the 2-GPU one held", func() (bool, string) {
		a, b := held(t, ns, "gpu-0-job"), held(t, ns, "gpu-1-job")
		return !a && b, fmt.Sprintf("suspended: gpu-0 %v, gpu-1 %v", a, b)
	})
	// Two more decisions (the first may have begun before now) hold it
	// still.
	enough := decisions() + 2
	poll.Eventually(t, t.Context(), 20*time.Second, "two more decisions", func() (bool, string) {
		n := decisions()
		return n >= enough, fmt.Sprintf("%v decisions, want %v", n, enough)
	})
	if !held(t, ns, "gpu-1-job") {
		t.Errorf("gpu-1 released with 1 GPU free for its 2")
	}

	// Karmada forgets capi-a.
	if err := c.Delete(ctx, joined); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "capi-a no longer Ready", func() (bool, string) {
		got := state()["capi-a"]
		return got == `False NotJoinedToKarmada: Karmada has no cluster "capi-a": join it to place work there`, got
	})
}
