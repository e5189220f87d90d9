//go:build integration

package scheduler

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controlplane"
	"github.com/caldera-sh/caldera/test/integration/framework"
	"github.com/caldera-sh/caldera/test/poll"
)

// preemptConfig is the integration tests' configuration with the preempt
// action.
var preemptConfig = strings.Replace(framework.SchedulerConfig,
	"actions: [enqueue, allocate, backfill]", "actions: [enqueue, allocate, preempt, backfill]", 1)

// TestPriorityPreemptionInOneQueue: on a full node, a pod of a higher
// PriorityClass evicts the youngest of the lower-priority pods, exactly
// one, and is bound in its place; the victim gets a Preempted event. A pod
// of another queue that asks for the same room meanwhile (and whose queue
// goes first) does not take it: the preemptor is nominated for it.
func TestPriorityPreemptionInOneQueue(t *testing.T) {
	if !strings.Contains(preemptConfig, "preempt,") {
		t.Fatal("the preempt configuration does not name the preempt action")
	}
	const ns = "preempt"
	createNamespace(t, ns)
	labelledNodes(t, ns, 1, "4")
	createQueue(t, queue("default", 1, nil))
	createQueue(t, queue("preempt-other", 1, nil))
	for name, value := range map[string]int32{"preempt-low": 10, "preempt-high": 1000} {
		pc := &schedv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if err := fw.Client.Create(t.Context(), pc); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	explained := fw.StartSchedulerExplained(t, preemptConfig)
	create := func(name, class, queue string) {
		t.Helper()
		spec := podSpec(ns, "2")
		spec.PriorityClassName = class
		createPod(t, ns, name, map[string]string{schedulingv1beta1.QueueNameAnnotation: queue}, spec)
	}
	get := func(name string) (corev1.Pod, error) { return getPod(t, ns, name) }
	bound := func(name string) (bool, string) {
		p, err := get(name)
		if err != nil {
			return false, err.Error()
		}
		return p.Spec.NodeName != "", "node " + p.Spec.NodeName
	}
	running := func(name string) func() (bool, string) { return podRunning(t, ns, name) }
	// Two low-priority pods fill the node, the second one younger: it
	// started a minute after the first (victims are chosen by start time).
	create("low-old", "preempt-low", "default")
	create("low-young", "preempt-low", "default")
	poll.Eventually(t, t.Context(), 30*time.Second, "low-old running", running("low-old"))
	poll.Eventually(t, t.Context(), 30*time.Second, "low-young running", running("low-young"))
	started := time.Now().Add(-time.Hour)
	setStartTime(t, ns, "low-old", started)
	setStartTime(t, ns, "low-young", started.Add(time.Minute))

	// other asks for the same room as high, in a queue that goes first
	// (it holds nothing), and has no priority to preempt with.
	create("other", "", "preempt-other")
	create("high", "preempt-high", "default")
	poll.Eventually(t, t.Context(), 60*time.Second, "high bound in the victim's place", func() (bool, string) {
		ok, _ := bound("high")
		var evs corev1.EventList
		_ = fw.Client.List(t.Context(), &evs, client.InNamespace(ns))
		var seen []string
		for _, e := range evs.Items {
			seen = append(seen, e.Reason+"/"+e.InvolvedObject.Name+": "+e.Message)
		}
		return ok, describePods(listPods(t, ns)) + fmt.Sprint(seen)
	})
	// A cycle after high's bind judges other, and leaves it pending.
	otherPod, err := get("other")
	if err != nil {
		t.Fatal(err)
	}
	explained.JudgedSince(t, 30*time.Second, time.Now(), podJob(otherPod))
	if ok, msg := bound("other"); ok {
		t.Errorf("other: %s, want it pending: the freed room was claimed by the preemptor", msg)
	}
	var p corev1.Pod
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "low-young"}, &p); !apierrors.IsNotFound(err) {
		t.Errorf("low-young: %v, want evicted", err)
	}
	if ok, msg := bound("low-old"); !ok {
		t.Errorf("low-old: %s, want it kept", msg)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "a Preempted event on the victim", func() (bool, string) {
		var evs corev1.EventList
		if err := fw.Client.List(t.Context(), &evs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			seen = append(seen, e.Reason+"/"+e.InvolvedObject.Name)
			if e.Reason == "Preempted" && e.InvolvedObject.Name == "low-young" {
				return true, ""
			}
		}
		return false, fmt.Sprint(seen)
	})
}

// TestPreemptionRespectsDisruptionBudgets: the youngest low-priority pod
// is guarded by a PodDisruptionBudget that allows no disruption. Its
// eviction is refused, the preemptor's claim on its room is dropped, and
// the next cycle evicts the other low-priority pod instead; the guarded pod
// runs on, with a FailedPreemption event.
func TestPreemptionRespectsDisruptionBudgets(t *testing.T) {
	const ns = "preempt-pdb"
	createNamespace(t, ns)
	labelledNodes(t, ns, 1, "4")
	createQueue(t, queue("default", 1, nil))
	for name, value := range map[string]int32{"preempt-low": 10, "preempt-high": 1000} {
		pc := &schedv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if err := fw.Client.Create(t.Context(), pc); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	kcm, err := controlplane.StartKubeControllerManager(t.Context(), fw.Cluster.APIServer, controlplane.KubeControllerManagerOptions{
		BinDir: fw.BinDir, Dir: filepath.Join(fw.Dir, "kcm-preempt-pdb"), Controllers: []string{"disruption"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := kcm.Stop(); err != nil {
			t.Error(err)
		}
	}()
	stop, err := fw.StartScheduler(preemptConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	create := func(name, class string, labels map[string]string) {
		t.Helper()
		spec := podSpec(ns, "2")
		spec.PriorityClassName = class
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: spec}
		if err := fw.Client.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	pods := func() map[string]corev1.Pod {
		out := map[string]corev1.Pod{}
		for _, p := range listPods(t, ns) {
			out[p.Name] = p
		}
		return out
	}
	running := func(name string) func() (bool, string) {
		return func() (bool, string) {
			p := pods()[name]
			return p.Status.Phase == corev1.PodRunning, describePods(listPods(t, ns))
		}
	}
	create("free", "preempt-low", nil)
	create("guarded", "preempt-low", map[string]string{"app": "guarded"})
	poll.Eventually(t, t.Context(), 30*time.Second, "free running", running("free"))
	poll.Eventually(t, t.Context(), 30*time.Second, "guarded running", running("guarded"))
	// guarded started a minute later: the first choice of victim.
	started := time.Now().Add(-time.Hour)
	setStartTime(t, ns, "free", started)
	setStartTime(t, ns, "guarded", started.Add(time.Minute))
	min := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guard"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &min,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
	}
	if err := fw.Client.Create(t.Context(), pdb); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 60*time.Second, "the budget allows no disruption", func() (bool, string) {
		var got policyv1.PodDisruptionBudget
		if err := fw.Client.Get(t.Context(), client.ObjectKeyFromObject(pdb), &got); err != nil {
			return false, err.Error()
		}
		return got.Status.ObservedGeneration == got.Generation && got.Status.CurrentHealthy == 1 && got.Status.DisruptionsAllowed == 0, fmt.Sprintf("%+v", got.Status)
	})

	create("high", "preempt-high", nil)
	poll.Eventually(t, t.Context(), 60*time.Second, "high bound in free's place", func() (bool, string) {
		got := pods()
		return got["high"].Spec.NodeName != "" && got["free"].Name == "", describePods(listPods(t, ns))
	})
	if p := pods()["guarded"]; p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		t.Errorf("guarded: %s, deleting %v; want it running", p.Status.Phase, p.DeletionTimestamp != nil)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "a FailedPreemption event on the guarded pod", func() (bool, string) {
		var evs corev1.EventList
		if err := fw.Client.List(t.Context(), &evs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			seen = append(seen, e.Reason+"/"+e.InvolvedObject.Name)
			if e.Reason == "FailedPreemption" && e.InvolvedObject.Name == "guarded" {
				return true, ""
			}
		}
		return false, fmt.Sprint(seen)
	})
}
