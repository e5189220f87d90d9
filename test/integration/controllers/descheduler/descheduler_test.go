//go:build integration

// Package descheduler tests the load-aware descheduler against a real API
// server with kwok nodes: it evicts through the Eviction API, respects
// disruption budgets and gangs, and a restarted descheduler does not evict
// again for heat it already relieved.
package descheduler

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controllers/descheduler"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(framework.Main(m, framework.Options{Kwok: true}, &fw))
}

const exampleConfig = "../../../../examples/descheduler/descheduler.conf"

var kwokToleration = []corev1.Toleration{{Key: controlplane.KwokTaint.Key, Operator: corev1.TolerationOpExists}}

// pod is a running pod of a ReplicaSet on node, requesting cpu, of the
// PriorityClass named (none: "").
func pod(t *testing.T, ns, name, node, cpu, class string, labels, annotations map[string]string) *corev1.Pod {
	t.Helper()
	yes := true
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs-uid", Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: node, PriorityClassName: class, Tolerations: kwokToleration, Containers: []corev1.Container{{
			Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}},
		}}},
	}
	if err := fw.Client.Create(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func usage(node, cpu string, pods map[*corev1.Pod]string) *metricsv1alpha1.NodeUsage {
	nu := &metricsv1alpha1.NodeUsage{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Timestamp:  metav1.NewTime(time.Now()),
		Usage:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi")},
	}
	for p, cpu := range pods {
		nu.Pods = append(nu.Pods, metricsv1alpha1.PodUsage{Namespace: p.Namespace, Name: p.Name, UID: p.UID,
			Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}})
	}
	return nu
}

// TestDeschedulerExample runs the documented configuration
// (examples/descheduler/descheduler.conf) on a hot node (9.5 of 10 CPUs
// in use) and a cool one (1 of 10). On the hot node: pods a (priority 0,
// 3 CPUs in use), b (priority 0, 2 CPUs, its budget allows no
// disruption), c (priority 100, 3 CPUs), d (priority 1000, half a CPU)
// and g (1 CPU, a member of a gang of two). One run evicts a (9.5 → 6.5,
// still above the low watermark of 60%), passes over b (its budget), then
// evicts c (→ 3.5) and stops. A restarted descheduler's run evicts nothing
// more, d included: the evicted pods' use, still in the node's averages,
// is leaving.
func TestDeschedulerExample(t *testing.T) {
	const ns = "descheduler"
	ctx := t.Context()
	if err := fw.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	hot, cool := ns+"-hot", ns+"-cool"
	var specs []controlplane.NodeSpec
	for _, name := range []string{hot, cool} {
		specs = append(specs, controlplane.NodeSpec{Name: name, Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("10"), corev1.ResourceMemory: resource.MustParse("100Gi")}})
	}
	if err := controlplane.CreateNodes(ctx, fw.Client, specs); err != nil {
		t.Fatal(err)
	}
	if err := fw.Client.Create(ctx, &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gang"},
		Spec: schedulingv1beta1.PodGroupSpec{MinMember: 2}}); err != nil {
		t.Fatal(err)
	}
	one := intstr.FromInt32(1)
	if err := fw.Client.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "b"}}}}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int32{100, 1000} {
		if err := fw.Client.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("descheduler-", v)}, Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	a := pod(t, ns, "a", hot, "3", "", nil, nil)
	b := pod(t, ns, "b", hot, "2", "", map[string]string{"app": "b"}, nil)
	c := pod(t, ns, "c", hot, "3", "descheduler-100", nil, nil)
	g := pod(t, ns, "g", hot, "1", "", nil, map[string]string{schedulingv1beta1.KubeGroupNameAnnotation: "gang"})
	d := pod(t, ns, "d", hot, "500m", "descheduler-1000", nil, nil)
	poll.Eventually(t, ctx, 30*time.Second, "the pods running", func() (bool, string) {
		var pods corev1.PodList
		if err := fw.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		n := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				n++
			}
		}
		return n == 5, fmt.Sprintf("%d of 5 running", n)
	})
	// The agents' reports, over a window that began once the pods ran.
	for _, nu := range []*metricsv1alpha1.NodeUsage{
		usage(hot, "9500m", map[*corev1.Pod]string{a: "3", b: "2", c: "3", g: "1", d: "500m"}),
		usage(cool, "1", nil),
	} {
		if err := fw.Client.Create(ctx, nu); err != nil {
			t.Fatal(err)
		}
	}

	data, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := descheduler.LoadConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	run := func() *events.FakeRecorder {
		t.Helper()
		rec := events.NewFakeRecorder(10)
		r := descheduler.NewReconciler(fw.Client, rec, cfg, clock.RealClock{})
		if _, err := r.Reconcile(klog.NewContext(ctx, klog.Background()), reconcile.Request{}); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	rec := run()
	evicted := func() []string {
		var pods corev1.PodList
		if err := fw.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		out := []string{"a", "b", "c", "d", "g"}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				out = slices.DeleteFunc(out, func(n string) bool { return n == p.Name })
			}
		}
		return out
	}
	if got := evicted(); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("evicted %v, want [a c]: a, then c once b's budget allows no disruption; never the gang member", got)
	}
	close(rec.Events)
	var notes []string
	for e := range rec.Events {
		notes = append(notes, e)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "Descheduled") || !strings.Contains(notes[0], "usage cpu 95% memory 8% is above the high watermark cpu 80% memory 80%") {
		t.Errorf("events %q, want two Descheduled events that give the node's usage", notes)
	}

	// A restarted descheduler runs at once: the evicted pods' use is
	// still in the node's averages, but leaving.
	run()
	if got := evicted(); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("after a restart, evicted %v, want still [a c]", got)
	}
	t.Cleanup(func() {
		for _, n := range []string{hot, cool} {
			_ = fw.Client.Delete(context.Background(), &metricsv1alpha1.NodeUsage{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
	})
}
