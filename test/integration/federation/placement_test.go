//go:build integration

package federation

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	dispatchcontroller "github.com/caldera-sh/caldera/pkg/federation/dispatch/controller"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/poll"
)

// readyCluster makes a Ready Push-mode Cluster with the CPUs allocatable
// and nothing allocated.
func readyCluster(t *testing.T, name string, cpus string) {
	t.Helper()
	ctx := t.Context()
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
	if err := fw.Client.Create(ctx, cl); err != nil {
		t.Fatal(err)
	}
	cl.Status = clusterv1alpha1.ClusterStatus{
		Conditions:      []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: metav1.Now()}},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus)}},
	}
	if err := fw.Client.Status().Update(ctx, cl); err != nil {
		t.Fatal(err)
	}
}

// fourCPUBinding is the held binding of a Job of two 2-CPU workers, under
// a policy that lets it go to either cluster.
func fourCPUBinding(ns, name string, clusters ...string) *workv1alpha2.ResourceBinding {
	rb := binding(ns, name)
	rb.Spec.Components[0].ReplicaRequirements.ResourceRequest[corev1.ResourceCPU] = resource.MustParse("2")
	rb.Spec.Placement = policyPlacement(clusters...)
	return rb
}

func policyPlacement(clusters ...string) *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: clusters},
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: "cluster", MaxGroups: 1, MinGroups: 1}},
	}
}

// TestPlacementSticks: the dispatcher places each released binding in the
// member it counted it on by writing spec.clusters and keeps Karmada's
// scheduler suspended, so that Karmada's resource detector, which writes
// the policy's placement back onto every binding when it re-applies the
// policy (done here as it does), changes nothing about where the work
// runs; a restarted dispatcher counts the placed work where it is and
// releases nothing more.
func TestPlacementSticks(t *testing.T) {
	const ns = "sticks"
	ctx := t.Context()
	c := fw.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	readyCluster(t, "sticks-a", "8")
	readyCluster(t, "sticks-b", "8")
	if err := c.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "sticks"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	// Five 4-CPU jobs on two 8-CPU members: four fit, two in each.
	for i := range 5 {
		name := fmt.Sprintf("sticky-%d", i)
		if err := c.Create(ctx, job(ns, name, "sticks")); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, fourCPUBinding(ns, name, "sticks-a", "sticks-b")); err != nil {
			t.Fatal(err)
		}
	}
	stop := startDispatcher(t)

	placed := func() map[string]string {
		out := map[string]string{}
		for i := range 5 {
			name := fmt.Sprintf("sticky-%d-job", i)
			out[name] = placedIn(t, ns, name)
		}
		return out
	}
	var first map[string]string
	poll.Eventually(t, t.Context(), 20*time.Second, "four placed, two in each member", func() (bool, string) {
		first = placed()
		per := map[string]int{}
		for _, cl := range first {
			per[cl]++
		}
		return per["sticks-a"] == 2 && per["sticks-b"] == 2 && per[""] == 1, fmt.Sprint(first)
	})
	for name, cl := range first {
		if cl == "" {
			continue
		}
		rb := getBinding(t, ns, name)
		if !rb.Spec.SchedulingSuspended() {
			t.Errorf("%s placed in %s with Karmada's scheduler no longer suspended: it may move it", name, cl)
		}
		if diff := cmp.Diff(policyPlacement("sticks-a", "sticks-b"), rb.Spec.Placement, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s's placement changed (-policy's,+binding's): it is Karmada's to write\n%s", name, diff)
		}
	}

	// Karmada's detector re-applies the policy (as after a restart of
	// karmada-controller-manager): the placement written back whole, the
	// rest of the spec kept.
	for i := range 5 {
		rb := getBinding(t, ns, fmt.Sprintf("sticky-%d-job", i))
		rb.Spec.Placement = policyPlacement("sticks-a", "sticks-b")
		if err := c.Update(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	// The dispatcher restarts too: nothing moves, the fifth stays held,
	// told so by a decision made after the restart (a new dispatcher's
	// event is a new object).
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	var heldName string
	for name, cl := range first {
		if cl == "" {
			heldName = strings.TrimSuffix(name, "-job")
		}
	}
	holds := func() int {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + heldName + ",reason=NoClusterFits"})
		if err != nil {
			t.Fatal(err)
		}
		return len(evs.Items)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "the fifth told why it waits", func() (bool, string) {
		n := holds()
		return n > 0, fmt.Sprintf("%d events", n)
	})
	stop()
	before := holds()
	startDispatcher(t)
	poll.Eventually(t, t.Context(), 20*time.Second, "the fifth told again why it waits", func() (bool, string) {
		n := holds()
		return n > before, fmt.Sprintf("%d events, %d before the restart", n, before)
	})
	if got := placed(); fmt.Sprint(got) != fmt.Sprint(first) {
		t.Errorf("after Karmada re-applied the policy and the dispatcher restarted, placed %v, want %v", got, first)
	}
}

// TestApplyRefusal: a released job whose member refuses to apply it (as
// Karmada reports on the binding) counts against its queue and the member
// for the grace, then no longer: the job is told why, and a job held for
// the room it took is released; once the member takes it, it counts again.
func TestApplyRefusal(t *testing.T) {
	const ns = "refusal"
	ctx := t.Context()
	c := fw.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	readyCluster(t, "refusing", "4")
	if err := c.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "refusal"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	const grace = 3 * time.Second
	startDispatcher(t, func(o *dispatchcontroller.Options) { o.ApplyFailureGrace = grace })
	// refused takes the member's 4 CPUs; waiting needs them too.
	if err := c.Create(ctx, job(ns, "refused", "refusal")); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, fourCPUBinding(ns, "refused", "refusing")); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "refused placed", func() (bool, string) {
		cl := placedIn(t, ns, "refused-job")
		return cl == "refusing", cl
	})
	if err := c.Create(ctx, job(ns, "waiting", "refusal")); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, fourCPUBinding(ns, "waiting", "refusing")); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(fw.RESTConfig())
	eventOf := func(name, reason string) (bool, string) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=" + reason})
		if err != nil || len(evs.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		return true, evs.Items[len(evs.Items)-1].Message
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "waiting held for the room refused took", func() (bool, string) {
		return eventOf("waiting", "NoClusterFits")
	})

	// The member refuses it, as Karmada reports a Work that failed to
	// apply.
	const said = `admission webhook "validate.jobs.example.com" denied the request: no GPUs in this team's namespace`
	rb := getBinding(t, ns, "refused-job")
	rb.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "refusing", Applied: false, AppliedMessage: said, Health: workv1alpha2.Unknown}}
	if err := c.Status().Update(ctx, rb); err != nil {
		t.Fatal(err)
	}
	refusedAt := time.Now()
	poll.Eventually(t, t.Context(), 20*time.Second, "refused told why", func() (bool, string) {
		ok, msg := eventOf("refused", dispatchcontroller.ReasonApplyFailed)
		want := `cluster refusing refuses the job: ` + said + `; it no longer counts against queue "refusal" or the cluster's room while Karmada retries applying it there`
		return ok && msg == want, msg
	})
	poll.Eventually(t, t.Context(), 20*time.Second, "waiting placed", func() (bool, string) {
		cl := placedIn(t, ns, "waiting-job")
		return cl == "refusing", cl
	})
	if waited := time.Since(refusedAt); waited < grace {
		t.Errorf("waiting placed %v after the refusal, before the %v grace", waited, grace)
	}
	if cl := placedIn(t, ns, "refused-job"); cl != "refusing" {
		t.Errorf("refused moved to %q: Karmada retries it where it is", cl)
	}

	// The member takes it after all: it counts again, and a third job is
	// held for the room both take.
	rb = getBinding(t, ns, "refused-job")
	rb.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "refusing", Applied: true, Health: workv1alpha2.Healthy}}
	if err := c.Status().Update(ctx, rb); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, job(ns, "third", "refusal")); err != nil {
		t.Fatal(err)
	}
	third := fourCPUBinding(ns, "third", "refusing")
	third.Spec.Components[0].ReplicaRequirements.ResourceRequest[corev1.ResourceCPU] = resource.MustParse("100m")
	if err := c.Create(ctx, third); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "third held: both count", func() (bool, string) {
		return eventOf("third", "NoClusterFits")
	})
	if !held(t, ns, "third-job") {
		t.Errorf("third released beside two jobs that fill the member")
	}
}
