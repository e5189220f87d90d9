//go:build integration

package federation

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	dispatchcontroller "github.com/caldera-sh/caldera/pkg/federation/dispatch/controller"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/poll"
)

// startDispatcher runs a dispatcher against the API server until the test
// ends, or until stop is called; the options may be changed first.
func startDispatcher(t *testing.T, change ...func(*dispatchcontroller.Options)) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
	ca, err := cache.New(fw.RESTConfig(), cache.Options{Scheme: fw.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(fw.RESTConfig(), client.Options{Scheme: fw.Scheme, Cache: &client.CacheOptions{Reader: ca}})
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(fw.Scheme, corev1.EventSource{Component: "caldera-global"})
	go func() { _ = ca.Start(ctx) }()
	opts := dispatchcontroller.Options{Heartbeat: time.Second}
	for _, c := range change {
		c(&opts)
	}
	d := dispatchcontroller.New(c, ca, recorder, clock.RealClock{}, opts)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
			broadcaster.Shutdown()
		})
	}
	t.Cleanup(stop)
	return stop
}

func job(ns, name, queue string) *batchv1alpha1.Job {
	return &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1alpha1.JobSpec{Queue: queue, MinAvailable: 2, Tasks: []batchv1alpha1.TaskSpec{{
			Name: "worker", Replicas: 2,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}},
		}}},
	}
}

// binding is a suspended binding of the Job, of two 1-CPU workers.
func binding(ns, name string) *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-job"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Namespace: ns, Name: name},
			Components: []workv1alpha2.Component{{Name: "worker", Replicas: 2, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{
				ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}}},
			Suspension: &workv1alpha2.Suspension{Scheduling: new(true)},
		},
	}
}

// held says whether the binding waits in its queue: scheduling suspended
// and no cluster chosen.
func held(t *testing.T, ns, name string) bool {
	t.Helper()
	return placedIn(t, ns, name) == "" && getBinding(t, ns, name).Spec.SchedulingSuspended()
}

// placedIn is the cluster the binding is placed in ("" for none).
func placedIn(t *testing.T, ns, name string) string {
	t.Helper()
	rb := getBinding(t, ns, name)
	if len(rb.Spec.Clusters) == 0 {
		return ""
	}
	return rb.Spec.Clusters[0].Name
}

func getBinding(t *testing.T, ns, name string) *workv1alpha2.ResourceBinding {
	t.Helper()
	var rb workv1alpha2.ResourceBinding
	if err := fw.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &rb); err != nil {
		t.Fatal(err)
	}
	return &rb
}

// TestDispatcherCapability: a queue capped at 4 CPUs on a Ready 8-CPU
// member gets two of its three 2-CPU jobs released; the third is held with
// an event naming the capability and the numbers, and released as soon as
// the cap is raised.
func TestDispatcherCapability(t *testing.T) {
	const ns = "dispatch"
	ctx := t.Context()
	c := fw.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	member := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "dispatch-member"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
	if err := c.Create(ctx, member); err != nil {
		t.Fatal(err)
	}
	member.Status = clusterv1alpha1.ClusterStatus{
		Conditions:      []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.Now()}},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}},
	}
	if err := c.Status().Update(ctx, member); err != nil {
		t.Fatal(err)
	}
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "capped"},
		Spec: schedulingv1beta1.QueueSpec{Weight: 1, Capability: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}
	if err := c.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		name := fmt.Sprintf("train-%d", i)
		if err := c.Create(ctx, job(ns, name, "capped")); err != nil {
			t.Fatal(err)
		}
		rb := binding(ns, name)
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	startDispatcher(t)

	poll.Eventually(t, t.Context(), 20*time.Second, "two of three released", func() (bool, string) {
		var states []bool
		for i := range 3 {
			states = append(states, held(t, ns, fmt.Sprintf("train-%d-job", i)))
		}
		return fmt.Sprint(states) == "[false false true]", fmt.Sprintf("suspended %v", states)
	})
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	poll.Eventually(t, t.Context(), 20*time.Second, "the held job told why", func() (bool, string) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=train-2,reason=QueueCapability"})
		if err != nil || len(evs.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		want := `held: queue "capped" would hold cpu 6, over its capability by cpu 2`
		return evs.Items[0].Message == want, evs.Items[0].Message
	})
	var third workv1alpha2.ResourceBinding
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "train-2-job"}, &third); err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(time.RFC3339, third.Annotations[dispatch.HeldSinceAnnotation]); err != nil {
		t.Errorf("held binding's %s annotation: %v", dispatch.HeldSinceAnnotation, err)
	}

	// Raising the cap releases it without waiting for the heartbeat.
	patched := q.DeepCopy()
	patched.Spec.Capability[corev1.ResourceCPU] = resource.MustParse("8")
	if err := c.Patch(ctx, patched, client.MergeFrom(q)); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 5*time.Second, "the third released", func() (bool, string) {
		return !held(t, ns, "train-2-job"), "still held"
	})
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "train-2-job"}, &third); err != nil {
		t.Fatal(err)
	}
	if _, ok := third.Annotations[dispatch.HeldSinceAnnotation]; ok {
		t.Errorf("released binding keeps its %s annotation", dispatch.HeldSinceAnnotation)
	}
	if third.Spec.Suspension.Dispatching != nil {
		t.Errorf("releasing set dispatching: %+v", third.Spec.Suspension)
	}
	if got, want := third.Spec.Clusters, []workv1alpha2.TargetCluster{{Name: "dispatch-member"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("released binding's clusters %+v, want %+v", got, want)
	}
	if !third.Spec.SchedulingSuspended() {
		t.Errorf("releasing lifted the scheduling suspension: Karmada's scheduler could move the job")
	}
	if third.Spec.Placement != nil {
		t.Errorf("releasing wrote a placement %+v: the policy's is Karmada's to write", third.Spec.Placement)
	}
}

// TestDispatcherPlacement: a binding goes only where its placement lets it
// (the label selector of its policy, a cluster's taint it does not
// tolerate), and one whose placement allows no Ready cluster is held
// saying so.
func TestDispatcherPlacement(t *testing.T) {
	const ns = "placement"
	ctx := t.Context()
	c := fw.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name, tier string
		cpu        string
		taint      bool
	}{{"place-big", "big", "100", false}, {"place-small", "small", "8", false}, {"place-tainted", "big", "100", true}} {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: m.name, Labels: map[string]string{"tier": m.tier}}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
		if m.taint {
			cl.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}}
		}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		cl.Status = clusterv1alpha1.ClusterStatus{
			Conditions:      []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.Now()}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(m.cpu)}},
		}
		if err := c.Status().Update(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "placed"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	tolerate := []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	for name, p := range map[string]*policyv1alpha1.Placement{
		"small-only":  {ClusterAffinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "small"}}}},
		"untolerated": {ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"place-tainted"}}},
		"tolerated":   {ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"place-tainted"}}, ClusterTolerations: tolerate},
	} {
		if err := c.Create(ctx, job(ns, name, "placed")); err != nil {
			t.Fatal(err)
		}
		rb := binding(ns, name)
		rb.Spec.Placement = p
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	startDispatcher(t)

	pinned := func(name string) string { return placedIn(t, ns, name+"-job") }
	poll.Eventually(t, t.Context(), 20*time.Second, "released where their placements allow", func() (bool, string) {
		got := fmt.Sprintf("small-only %s, tolerated %s", pinned("small-only"), pinned("tolerated"))
		return got == "small-only place-small, tolerated place-tainted", got
	})
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	poll.Eventually(t, t.Context(), 20*time.Second, "the untolerated job told why", func() (bool, string) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=untolerated,reason=NoClusterFits"})
		if err != nil || len(evs.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		return evs.Items[0].Message == "held: no Ready cluster is one the job's placement allows", evs.Items[0].Message
	})
	if p := pinned("untolerated"); p != "" {
		t.Errorf("untolerated released to %s", p)
	}
}
