//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestFederationPriority: queue "urgent" (priority 10, weight 1) and
// queue "routine" (priority 0, weight 4) each wait with 12 1-CPU Jobs
// when the 16-CPU federation comes up; two of routine's, submitted last,
// have a high PriorityClass. Queue priority comes before share: urgent's
// 12 run; then job priority before age: routine's two high ones and its
// two oldest (by their bindings' creation, then name) take the last 4
// CPUs.
func TestFederationPriority(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	f := startFederation(t, ctx, 0, "urgent", "routine")
	kc := f.karmada
	const ns = "priorities"
	high := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}
	for _, c := range append([]client.Client{kc}, slices.Collect(maps.Values(f.members))...) {
		if err := c.Create(ctx, high.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	if err := kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for q, p := range map[string]int32{"urgent": 10, "routine": 0} {
		w := int32(1)
		if q == "routine" {
			w = 4
		}
		if err := kc.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: q}, Spec: schedulingv1beta1.QueueSpec{Weight: w, Priority: p}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := kc.Create(ctx, jobPolicy(ns)); err != nil {
		t.Fatal(err)
	}
	setReady(t, ctx, f, false)

	// Routine's first, oldest first, then urgent's; routine's two high
	// priority jobs last.
	var names []string
	for i := range 10 {
		names = append(names, fmt.Sprintf("routine-%02d", i))
	}
	for i := range 12 {
		names = append(names, fmt.Sprintf("urgent-%02d", i))
	}
	names = append(names, "routine-high-0", "routine-high-1")
	for _, name := range names {
		j := trainingJob(ns, name, strings.SplitN(name, "-", 2)[0], 1)
		if strings.Contains(name, "high") {
			j.Spec.PriorityClassName = "high"
		}
		if err := kc.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	bindingsHeld(t, ctx, f, ns, len(names))
	// Routine's Jobs are submitted in the order of their names, and the
	// stand-in makes their bindings in that order, so its two oldest are
	// routine-00 and routine-01 (Karmada may make them in another order).
	oldest := oldestBindings(t, ctx, f, ns, "routine-0", 2)
	t.Logf("routine's oldest jobs: %v", oldest)
	setReady(t, ctx, f, true)

	var running map[string]string
	poll.Eventually(t, ctx, 3*time.Minute, "16 jobs running", func() (bool, string) {
		running = f.running(t, ctx, ns)
		return len(running) == 16, fmt.Sprintf("running %v", slices.Sorted(maps.Keys(running)))
	})
	want := append(oldest, "routine-high-0", "routine-high-1")
	for i := range 12 {
		want = append(want, fmt.Sprintf("urgent-%02d", i))
	}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(running)); !slices.Equal(got, want) {
		t.Errorf("running %v, want %v", got, want)
	}
	// Everything Karmada propagates is accepted by the members: the
	// Queues, and not the members' own default Queue or system
	// PriorityClasses (nor "high", made in each by hand).
	unapplied, err := f.plane.Unapplied(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range unapplied {
		t.Errorf("not applied in its member: %s", u)
	}
}

// TestFederationLargeJob: 14 short 1-CPU Jobs fill the 16-CPU federation
// but for two CPUs; an 8-CPU Job arrives and cannot fit,
// and the 1-CPU Jobs behind it go on running in the free CPUs. A stream
// of 30 more 1-CPU Jobs would take every CPU the short Jobs free, but
// after the 8-second starvation wait the large Job reserves a member:
// it runs there while Jobs of the stream still wait, and a stream Job
// finding no room elsewhere is told the member is reserved.
func TestFederationLargeJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	f := startFederation(t, ctx, 8*time.Second, "batch")
	kc := f.karmada
	const ns = "large"
	if err := kc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := kc.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := kc.Create(ctx, jobPolicy(ns)); err != nil {
		t.Fatal(err)
	}
	// The fill: 14 Jobs ending one second apart, from 40 s on, long
	// enough to outlast the steps below. They are placed by name, eight
	// in member-a and six in member-b, so the two free CPUs and the
	// stream's first Jobs are in member-b. Whichever member the large Job
	// reserves, the other has room for the stream before the reserved
	// one frees whole: member-b's first stream Jobs end 20 s after they
	// start, before any fill; member-a's fills (40–47 s) end before
	// member-b's (48–53 s).
	fills := map[string][]string{}
	for i := range 14 {
		member := "member-a"
		if i >= 8 {
			member = "member-b"
		}
		fills[member] = append(fills[member], fmt.Sprintf("fill-%02d", i))
	}
	for member, names := range fills {
		if err := kc.Create(ctx, pinPolicy(ns, "fill-"+member, member, names)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 14 {
		if err := kc.Create(ctx, runFor(trainingJob(ns, fmt.Sprintf("fill-%02d", i), "batch", 1), time.Duration(40+i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	poll.Eventually(t, ctx, 2*time.Minute, "the 14 fill jobs running", func() (bool, string) {
		r := f.running(t, ctx, ns)
		return len(r) == 14, fmt.Sprintf("%d running", len(r))
	})

	if err := kc.Create(ctx, trainingJob(ns, "large", "batch", 8)); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(f.cluster.RESTConfig())
	poll.Eventually(t, ctx, time.Minute, "the large job told it does not fit", func() (bool, string) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=large,reason=NoClusterFits"})
		if err != nil || len(evs.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		return strings.Contains(evs.Items[0].Message, "no Ready cluster has cpu 8 free for the job"), evs.Items[0].Message
	})
	// The stream; its Jobs run 20 s each.
	for i := range 30 {
		if err := kc.Create(ctx, runFor(trainingJob(ns, fmt.Sprintf("stream-%02d", i), "batch", 1), 20*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// Not blocked: the stream's first two take the two free CPUs while
	// the large Job waits.
	poll.Eventually(t, ctx, time.Minute, "stream-00 and stream-01 running beside the waiting large job", func() (bool, string) {
		r := f.running(t, ctx, ns)
		_, large := r["large"]
		_, s0 := r["stream-00"]
		_, s1 := r["stream-01"]
		return s0 && s1 && !large, fmt.Sprintf("running %v", slices.Sorted(maps.Keys(r)))
	})

	// Not starved: it reserves a member and runs there before the stream
	// has drained.
	poll.Eventually(t, ctx, time.Minute, "the large job reserving a member", func() (bool, string) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=large,reason=NoClusterFits"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, ", it reserves member-") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events, none reserving", len(evs.Items))
	})
	var reservedBy string
	poll.Eventually(t, ctx, 2*time.Minute, "the large job running", func() (bool, string) {
		r := f.running(t, ctx, ns)
		reservedBy = r["large"]
		return reservedBy != "", fmt.Sprintf("%d running", len(r))
	})
	held := 0
	var rbs workv1alpha2.ResourceBindingList
	if err := kc.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, rb := range rbs.Items {
		if strings.HasPrefix(rb.Name, "stream-") && rb.Spec.SchedulingSuspended() && len(rb.Spec.Clusters) == 0 {
			held++
		}
	}
	if held == 0 {
		t.Errorf("the large job ran only after the stream drained; it should have reserved %s before", reservedBy)
	}
	// The stream Jobs released before the reservation ran in the other
	// member, and a stream Job that found no room was told the reserved
	// member was why.
	other := "member-a"
	if reservedBy == other {
		other = "member-b"
	}
	var onOther batchv1alpha1.JobList
	if err := f.members[other].List(ctx, &onOther, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	stream := 0
	for _, j := range onOther.Items {
		if strings.HasPrefix(j.Name, "stream-") {
			stream++
		}
	}
	if stream < 2 {
		t.Errorf("%d stream jobs ran in %s while %s was reserved, want the stream to go on there", stream, other, reservedBy)
	}
	evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=CapacityReserved"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) == 0 {
		t.Errorf("no stream job was told %s is reserved", reservedBy)
	} else if m := evs.Items[0].Message; !strings.Contains(m, "reserved for jobs waiting longer") {
		t.Errorf("CapacityReserved event says %q", m)
	}
	t.Logf("large ran in %s with %d stream jobs still held; %d stream jobs ran in %s", reservedBy, held, stream, other)
}

// pinPolicy propagates the named Jobs to one member. It names them, so
// it claims them over jobPolicy, which selects the kind.
func pinPolicy(ns, name, member string, jobs []string) *policyv1alpha1.PropagationPolicy {
	pp := jobPolicy(ns)
	pp.Name = name
	pp.Spec.ResourceSelectors = nil
	for _, j := range jobs {
		pp.Spec.ResourceSelectors = append(pp.Spec.ResourceSelectors, policyv1alpha1.ResourceSelector{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: j})
	}
	pp.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{member}}
	return pp
}

// runFor makes the Job's pods succeed after d on kwok.
func runFor(j *batchv1alpha1.Job, d time.Duration) *batchv1alpha1.Job {
	for i := range j.Spec.Tasks {
		tmpl := &j.Spec.Tasks[i].Template
		if tmpl.Annotations == nil {
			tmpl.Annotations = map[string]string{}
		}
		tmpl.Annotations["pod.caldera.sh/run-duration"] = d.String()
	}
	return j
}

// oldestBindings names the Jobs of the n bindings, of those in the
// namespace whose names start with prefix, that the dispatcher takes first
// among jobs of equal priority in a queue: the oldest by creation time
// (whole seconds), then by name.
func oldestBindings(t *testing.T, ctx context.Context, f *federation, ns, prefix string, n int) []string {
	t.Helper()
	var rbs workv1alpha2.ResourceBindingList
	if err := f.karmada.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var of []workv1alpha2.ResourceBinding
	for _, rb := range rbs.Items {
		if strings.HasPrefix(rb.Name, prefix) {
			of = append(of, rb)
		}
	}
	slices.SortFunc(of, func(a, b workv1alpha2.ResourceBinding) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), strings.Compare(a.Name, b.Name))
	})
	if len(of) < n {
		t.Fatalf("%d bindings named %s*, want at least %d", len(of), prefix, n)
	}
	var out []string
	for _, rb := range of[:n] {
		out = append(out, rb.Spec.Resource.Name)
	}
	return out
}

// bindingsHeld waits for n bindings in the namespace.
func bindingsHeld(t *testing.T, ctx context.Context, f *federation, ns string, n int) {
	t.Helper()
	poll.Eventually(t, ctx, time.Minute, fmt.Sprintf("all %d bindings held", n), func() (bool, string) {
		var rbs workv1alpha2.ResourceBindingList
		if err := f.karmada.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		return len(rbs.Items) == n, fmt.Sprintf("%d bindings", len(rbs.Items))
	})
}
