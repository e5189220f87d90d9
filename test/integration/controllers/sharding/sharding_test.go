//go:build integration

// Package sharding tests the sharding controller against a real API
// server with kwok nodes: the NodeShards it writes follow node labels and
// CPU utilisation.
package sharding

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	shardv1alpha1 "github.com/caldera-sh/caldera/apis/shard/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/controllers/sharding"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	shardcore "github.com/caldera-sh/caldera/pkg/scheduler/sharding/core"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(framework.Main(m, framework.Options{Kwok: true}, &fw))
}

// startController runs the sharding controller with the documented
// configuration (examples/sharding/sharding-controller.conf), resyncing every
// second, until the test ends.
func startController(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile("../../../../examples/sharding/sharding-controller.conf")
	if err != nil {
		t.Fatal(err)
	}
	startControllerWith(t, data, clock.RealClock{})
}

// startControllerWith runs the sharding controller with the configuration,
// resyncing every second, until the test ends.
func startControllerWith(t *testing.T, data []byte, clk clock.PassiveClock) {
	t.Helper()
	cfg, err := sharding.LoadConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ResyncPeriod = &metav1.Duration{Duration: time.Second}
	mgr, err := ctrl.NewManager(fw.RESTConfig(), ctrl.Options{
		Scheme:                 fw.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlconfig.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sharding.NewReconciler(mgr.GetClient(), cfg, clk).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("controller manager did not stop")
		}
	})
}

// expectShards waits until the NodeShards named in want desire exactly
// what it says.
func expectShards(t *testing.T, what string, want map[string][]string) {
	t.Helper()
	expectShardsWhile(t, what, want, func() {})
}

// expectShardsWhile is expectShards, calling step before each look.
func expectShardsWhile(t *testing.T, what string, want map[string][]string, step func()) {
	t.Helper()
	poll.Eventually(t, t.Context(), 30*time.Second, what, func() (bool, string) {
		step()
		var list shardv1alpha1.NodeShardList
		if err := fw.Client.List(t.Context(), &list); err != nil {
			return false, err.Error()
		}
		got := map[string][]string{}
		for _, s := range list.Items {
			if _, ok := want[s.Name]; !ok {
				continue // another test's
			}
			nodes := slices.Clone(s.Spec.NodesDesired)
			slices.Sort(nodes)
			got[s.Name] = nodes
		}
		return cmp.Equal(want, got), cmp.Diff(want, got)
	})
}

// createNodes creates the kwok nodes and, when the test ends, deletes them
// and the NodeShards written meanwhile, so that the next test (or the
// next run of this one) splits only its own nodes. The cleanup runs after
// the controller started later has stopped.
func createNodes(t *testing.T, specs []controlplane.NodeSpec) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		for _, s := range specs {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.Name}}
			if err := fw.Client.Delete(ctx, n); client.IgnoreNotFound(err) != nil {
				t.Errorf("deleting node %s: %v", s.Name, err)
			}
		}
		if err := fw.Client.DeleteAllOf(ctx, &shardv1alpha1.NodeShard{}); err != nil {
			t.Errorf("deleting NodeShards: %v", err)
		}
	})
	if err := controlplane.CreateNodes(t.Context(), fw.Client, specs); err != nil {
		t.Fatal(err)
	}
}

// runOn creates a running pod bound to node, requesting cpu; it is
// deleted when the test ends.
func runOn(t *testing.T, name, node, cpu string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
	}
	if err := fw.Client.Create(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fw.Client.Delete(context.Background(), p, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting pod %s: %v", p.Name, err)
		}
	})
	return p
}

// TestShardsFollowUtilisation runs the documented split: the agent
// scheduler takes nodes whose pods request 70% or more of their CPU (and
// at least one node, a warmup node first), the batch scheduler the rest.
// A node near the boundary stays where it is (hysteresis).
func TestShardsFollowUtilisation(t *testing.T) {
	var specs []controlplane.NodeSpec
	for i := range 4 {
		s := controlplane.NodeSpec{Name: fmt.Sprintf("n%d", i), Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}}
		if i == 3 {
			s.Labels = map[string]string{sharding.WarmupLabel: "true"}
		}
		specs = append(specs, s)
	}
	createNodes(t, specs)
	startController(t)
	// Every node is idle: the batch scheduler's band; the agent scheduler
	// takes its one node, the warmup node.
	expectShards(t, "idle nodes", map[string][]string{"agent-scheduler": {"n3"}, "volcano": {"n0", "n1", "n2"}})

	// n1's pods request 3 of its 4 CPUs: it moves to the agent
	// scheduler, which no longer needs the warmup node.
	runOn(t, "n1-a", "n1", "2")
	small := runOn(t, "n1-b", "n1", "1")
	expectShards(t, "n1 busy", map[string][]string{"agent-scheduler": {"n1"}, "volcano": {"n0", "n2", "n3"}})

	// n1 falls to 2.75 CPUs (69%): within the hysteresis, it stays. n2
	// rises to 3 CPUs and joins; the write that moves n2 is computed with
	// n1's drop already seen (the pods' events arrive in order).
	if err := fw.Client.Delete(t.Context(), small, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	runOn(t, "n1-c", "n1", "750m")
	runOn(t, "n2-a", "n2", "3")
	expectShards(t, "n2 busy, n1 held", map[string][]string{"agent-scheduler": {"n1", "n2"}, "volcano": {"n0", "n3"}})
}

// renew writes a NodeShard's status as its scheduler instance does, with
// a new lastUpdateTime, reading it again when the controller changed it
// meanwhile (its nodes moving), as an instance does.
func renew(t *testing.T, name string, at time.Time) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var s shardv1alpha1.NodeShard
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: name}, &s); err != nil {
			return err
		}
		stamp := metav1.NewTime(at)
		s.Status.LastUpdateTime = &stamp
		s.Status.NodesInUse = s.Spec.NodesDesired
		return fw.Client.Status().Update(t.Context(), &s)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGoneInstanceShardIsReassigned: an instance whose status is not
// renewed for StaleAfter is gone, and its nodes go to the live shards;
// they come back when it renews its status again.
func TestGoneInstanceShardIsReassigned(t *testing.T) {
	var specs []controlplane.NodeSpec
	for _, n := range []struct{ name, pool string }{{"b1", "batch"}, {"a1", "agents"}, {"a2", "agents"}} {
		specs = append(specs, controlplane.NodeSpec{Name: n.name, Labels: map[string]string{"pool": n.pool}})
	}
	createNodes(t, specs)
	clk := clocktesting.NewFakeClock(time.Now())
	startControllerWith(t, []byte(`scheduler-configs:
- name: batch
  node-selector: pool=batch
- name: agents
  node-selector: pool=agents
`), clk)
	expectShards(t, "by pool", map[string][]string{"batch": {"b1"}, "agents": {"a1", "a2"}})
	renew(t, "batch", clk.Now())
	renew(t, "agents", clk.Now())

	// Time passes, and only batch renews its status: once the controller
	// has not seen agents' renewed for StaleAfter, agents is gone.
	start := clk.Now()
	expectShardsWhile(t, "agents gone", map[string][]string{"batch": {"a1", "a2", "b1"}, "agents": {}}, func() {
		clk.Step(shardcore.HeartbeatPeriod)
		renew(t, "batch", clk.Now())
	})
	if waited := clk.Since(start); waited <= shardcore.StaleAfter {
		t.Errorf("agents was taken for gone after %s, before StaleAfter (%s)", waited, shardcore.StaleAfter)
	}

	// agents renews its status: its nodes come back.
	renew(t, "agents", clk.Now())
	expectShards(t, "agents back", map[string][]string{"batch": {"b1"}, "agents": {"a1", "a2"}})
}
