package writeback

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// TestEventsFollowReasonsNotNumbers: a waiting gang's message changes with
// every placement elsewhere; events are emitted when its reason changes,
// and a message-only change is written at most every MessageInterval.
func TestEventsFollowReasonsNotNumbers(t *testing.T) {
	rec := events.NewFakeRecorder(100)
	w := NewWriter(nil, rec)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	pg := schedtesting.MakePodGroup("pg", "ns").MinMember(2).Phase(schedulingv1beta1.PodGroupInqueue).Obj()
	snap := api.Build(api.Objects{
		Pods:      []*corev1.Pod{st.MakePod("ns", "a").Group("pg").Obj(), st.MakePod("ns", "b").Group("pg").Obj()},
		PodGroups: []*schedulingv1beta1.PodGroup{pg},
	})
	cycle := func(typ, msg string) {
		outcomes := map[api.JobID]*framework.JobOutcome{"ns/pg": {Blockers: []*framework.Reason{framework.Reasonf(typ, "%s", msg)}}}
		w.Apply(snap, outcomes, nil, metav1.NewTime(now))
		// The write lands: the PodGroup now shows what was written.
		if d, ok := w.written["podgroup/ns/pg"].desired.(schedulingv1beta1.PodGroupStatus); ok {
			snap.Jobs["ns/pg"].PodGroup.Status = d
		}
	}
	drain := func() int {
		n := 0
		for {
			select {
			case <-rec.Events:
				n++
			default:
				return n
			}
		}
	}
	cycle("NotEnoughResources", "1 of 2 tasks placeable")
	if n := drain(); n != 3 {
		t.Errorf("first reason: %d events, want 3 (the PodGroup and both pods)", n)
	}
	first := w.written["podgroup/ns/pg"].at
	now = now.Add(time.Second)
	cycle("NotEnoughResources", "1 of 2 tasks placeable") // shown as desired: nothing to write
	cycle("NotEnoughResources", "0 of 2 tasks placeable")
	if n := drain(); n != 0 {
		t.Errorf("message-only change: %d events, want 0", n)
	}
	if got := w.written["podgroup/ns/pg"].at; !got.Equal(first) {
		t.Errorf("message-only change within %s was written at %s", MessageInterval, got)
	}
	now = now.Add(MessageInterval)
	cycle("NotEnoughResources", "0 of 2 tasks placeable")
	if got := w.written["podgroup/ns/pg"].at; !got.Equal(now) {
		t.Errorf("message change after %s was not written (last write %s)", MessageInterval, got)
	}
	cycle("QueueOverused", "queue default has used its share")
	if n := drain(); n != 3 {
		t.Errorf("new reason: %d events, want 3", n)
	}
}

// TestGangsShortOfPodsAreGivenTimeForThem: a gang short of pods, and
// blocked by nothing else, is not reported (no condition, no event) for
// PodArrivalGrace; after it, or at once for any other reason, it is.
func TestGangsShortOfPodsAreGivenTimeForThem(t *testing.T) {
	rec := events.NewFakeRecorder(100)
	w := NewWriter(nil, rec)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	pg := schedtesting.MakePodGroup("pg", "ns").MinMember(3).Phase(schedulingv1beta1.PodGroupInqueue).Obj()
	snap := api.Build(api.Objects{
		Pods:      []*corev1.Pod{st.MakePod("ns", "a").Group("pg").Obj(), st.MakePod("ns", "b").Group("pg").Obj()},
		PodGroups: []*schedulingv1beta1.PodGroup{pg},
	})
	cycle := func(reasons ...string) (condition string, events int) {
		var blockers []*framework.Reason
		for _, r := range reasons {
			blockers = append(blockers, framework.Reasonf(r, "%s", r))
		}
		w.Apply(snap, map[api.JobID]*framework.JobOutcome{"ns/pg": {Blockers: blockers}}, nil, metav1.NewTime(now))
		if d, ok := w.written["podgroup/ns/pg"].desired.(schedulingv1beta1.PodGroupStatus); ok {
			snap.Jobs["ns/pg"].PodGroup.Status = d
		}
		for _, c := range snap.Jobs["ns/pg"].PodGroup.Status.Conditions {
			if c.Type == schedulingv1beta1.PodGroupUnschedulableType {
				condition = c.Reason
			}
		}
		for {
			select {
			case <-rec.Events:
				events++
			default:
				return condition, events
			}
		}
	}
	if c, n := cycle("NotEnoughPods"); c != "" || n != 0 {
		t.Errorf("just short of pods: condition %q, %d events; want none", c, n)
	}
	now = now.Add(PodArrivalGrace - time.Second)
	if c, n := cycle("NotEnoughPods"); c != "" || n != 0 {
		t.Errorf("short of pods within the grace: condition %q, %d events; want none", c, n)
	}
	now = now.Add(time.Second)
	if c, n := cycle("NotEnoughPods"); c != "NotEnoughPods" || n != 3 {
		t.Errorf("short of pods after the grace: condition %q, %d events; want NotEnoughPods and 3", c, n)
	}

	// Another job: short of pods and over its queue's share is reported at once.
	w2 := NewWriter(nil, events.NewFakeRecorder(100))
	w2.now = w.now
	snap.Jobs["ns/pg"].PodGroup.Status = pg.Status
	w = w2
	rec = w2.recorder.(*events.FakeRecorder)
	if c, n := cycle("QueueOverused", "NotEnoughPods"); c != "QueueOverused" || n != 3 {
		t.Errorf("short of pods and over its share: condition %q, %d events; want QueueOverused and 3", c, n)
	}
}

// TestStatusShownDifferentlyIsWrittenAgain: a status written is not
// written again while the informer may still be catching up, but one the
// API server still shows differently ResendAfter later (another writer
// changed it, or the write was lost) is.
func TestStatusShownDifferentlyIsWrittenAgain(t *testing.T) {
	w := NewWriter(nil, nil)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "q"}}
	q.Status.Pending = 3 // shown by the API server; the snapshot has no jobs
	snap := api.Build(api.Objects{Queues: []*schedulingv1beta1.Queue{q}})
	queued := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		_, ok := w.pending["queue/q"]
		delete(w.pending, "queue/q") // the write was made
		return ok
	}
	w.Apply(snap, nil, nil, metav1.NewTime(now))
	if !queued() {
		t.Fatal("a queue shown with a status other than computed was not written")
	}
	now = now.Add(ResendAfter - time.Second)
	w.Apply(snap, nil, nil, metav1.NewTime(now))
	if queued() {
		t.Errorf("written again %s after the first write, before the informer could be expected to show it", ResendAfter-time.Second)
	}
	now = now.Add(time.Second)
	w.Apply(snap, nil, nil, metav1.NewTime(now))
	if !queued() {
		t.Errorf("still shown differently %s after it was written, and not written again", ResendAfter)
	}
}

// TestTransitionTimeKeptUntilShown: a gang placed turns Running with a
// Scheduled condition; until the informer shows the write, every sync
// computes the transition again, and it keeps the time first decided
// rather than queueing a new write with a new time.
func TestTransitionTimeKeptUntilShown(t *testing.T) {
	w := NewWriter(nil, nil)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	snap := jobSnapshot("", 1, st.MakePod("ns", "a").Group("pg").Node("n1").Obj())
	touched := map[api.JobID]bool{"ns/pg": true}
	w.Apply(snap, nil, touched, metav1.NewTime(now))
	first, ok := w.written["podgroup/ns/pg"].desired.(schedulingv1beta1.PodGroupStatus)
	if !ok || first.Phase != schedulingv1beta1.PodGroupRunning {
		t.Fatalf("queued %+v, want Running", w.written["podgroup/ns/pg"])
	}
	queuedAt := w.written["podgroup/ns/pg"].at
	now = now.Add(3 * time.Second)
	w.Apply(snap, nil, touched, metav1.NewTime(now))
	if got := w.written["podgroup/ns/pg"].at; !got.Equal(queuedAt) {
		t.Errorf("the same status queued again %s later: %+v", now.Sub(queuedAt), w.written["podgroup/ns/pg"])
	}
	// Once shown, the status is what was desired: nothing to write.
	snap.Jobs["ns/pg"].PodGroup.Status = first
	if d := DesiredPodGroupStatus(snap.Jobs["ns/pg"], nil, metav1.NewTime(now)); !equality.Semantic.DeepEqual(d, first) {
		t.Errorf("desired once shown: %+v, want %+v", d, first)
	}
}

// TestRecreatedObjectIsWrittenAfresh: a PodGroup deleted and made again
// under its name (a job aborted and resumed) is another object; what was
// written to the first holds nothing back from the second.
func TestRecreatedObjectIsWrittenAfresh(t *testing.T) {
	w := NewWriter(nil, nil)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	build := func(uid types.UID) *api.Snapshot {
		return jobSnapshot(uid, 1, st.MakePod("ns", "a").Group("pg").Node("n1").Phase(corev1.PodRunning).Obj())
	}
	touched := map[api.JobID]bool{"ns/pg": true}
	queued := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		_, ok := w.pending["podgroup/ns/pg"]
		delete(w.pending, "podgroup/ns/pg") // the write was made
		return ok
	}
	w.Apply(build("first"), nil, touched, metav1.NewTime(now))
	if !queued() {
		t.Fatal("a placed job's PodGroup was not written")
	}
	now = now.Add(time.Second)
	w.Apply(build("first"), nil, touched, metav1.NewTime(now))
	if queued() {
		t.Fatal("the same status queued again before the informer could show it")
	}
	w.Apply(build("second"), nil, touched, metav1.NewTime(now))
	if !queued() {
		t.Error("a PodGroup made again under the name of one written a second ago was not written")
	}
}

// TestWaitingWriteDroppedOnceShown: a write held back (a placed gang waits
// for its pods to start) is dropped when the job comes back to the status
// its PodGroup shows, rather than writing, later, a status no longer true.
func TestWaitingWriteDroppedOnceShown(t *testing.T) {
	w := NewWriter(nil, nil)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	placed := jobSnapshot("", 1, st.MakePod("ns", "a").Group("pg").Node("n1").Obj())
	pg := placed.Jobs["ns/pg"].PodGroup
	touched := map[api.JobID]bool{"ns/pg": true}
	w.Apply(placed, nil, touched, metav1.NewTime(now))
	w.mu.Lock()
	_, waiting := w.pending["podgroup/ns/pg"]
	w.mu.Unlock()
	if !waiting {
		t.Fatal("the placement of a gang was not queued")
	}
	gone := api.Build(api.Objects{PodGroups: []*schedulingv1beta1.PodGroup{pg}})
	if d := DesiredPodGroupStatus(gone.Jobs["ns/pg"], nil, metav1.NewTime(now)); !equality.Semantic.DeepEqual(d, pg.Status) {
		t.Fatalf("precondition: with its pod gone the job should want what it shows; wants %+v", d)
	}
	w.Apply(gone, nil, touched, metav1.NewTime(now))
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, waiting := w.pending["podgroup/ns/pg"]; waiting {
		t.Error("a held write still waits after the job came back to what its PodGroup shows")
	}
}

// TestOldRecordsAreSwept: records older than ResendAfter hold nothing
// back and are forgotten (nominations of pods long gone among them).
func TestOldRecordsAreSwept(t *testing.T) {
	w := NewWriter(nil, nil)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	w.WriteNomination(&api.TaskInfo{Pod: st.MakePod("ns", "a").Obj(), Namespace: "ns", Name: "a"}, "n1")
	w.mu.Lock()
	delete(w.pending, "pod/ns/a") // the write was made
	w.mu.Unlock()
	empty := api.Build(api.Objects{})
	w.Apply(empty, nil, nil, metav1.NewTime(now))
	if len(w.written) != 1 {
		t.Fatalf("a record %s old swept: %v", time.Duration(0), w.written)
	}
	now = now.Add(ResendAfter)
	w.Apply(empty, nil, nil, metav1.NewTime(now))
	if len(w.written) != 0 {
		t.Errorf("records %s old kept: %v", ResendAfter, w.written)
	}
}

// TestRecreatedPodGroupIsAnnouncedAgain: the reasons announced in events
// were the first PodGroup's; one made again under its name, blocked for
// the same reason, has it announced on itself.
func TestRecreatedPodGroupIsAnnouncedAgain(t *testing.T) {
	rec := events.NewFakeRecorder(100)
	w := NewWriter(nil, rec)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	cycle := func(uid types.UID) int {
		snap := jobSnapshot(uid, 2, st.MakePod("ns", "a").Group("pg").Obj(), st.MakePod("ns", "b").Group("pg").Obj())
		outcomes := map[api.JobID]*framework.JobOutcome{"ns/pg": {Blockers: []*framework.Reason{framework.Reasonf("NotEnoughResources", "0 of 2 tasks placeable")}}}
		w.Apply(snap, outcomes, nil, metav1.NewTime(now))
		n := 0
		for {
			select {
			case <-rec.Events:
				n++
			default:
				return n
			}
		}
	}
	if n := cycle("first"); n != 3 {
		t.Fatalf("first PodGroup: %d events, want 3 (the PodGroup and both pods)", n)
	}
	if n := cycle("first"); n != 0 {
		t.Fatalf("the same reason again: %d events, want 0", n)
	}
	now = now.Add(time.Second)
	if n := cycle("second"); n != 3 {
		t.Errorf("a PodGroup made again under the name, blocked alike: %d events, want 3", n)
	}
}

// TestGoneJobsAreForgottenAtTheSweep: what the writer knew of a job (its
// PodGroup's UID, the reasons announced) is kept while the job is in the
// snapshots and forgotten at the first sweep after it is gone.
func TestGoneJobsAreForgottenAtTheSweep(t *testing.T) {
	w := NewWriter(nil, events.NewFakeRecorder(100))
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	snap := jobSnapshot("u", 2, st.MakePod("ns", "a").Group("pg").Obj(), st.MakePod("ns", "b").Group("pg").Obj())
	outcomes := map[api.JobID]*framework.JobOutcome{"ns/pg": {Blockers: []*framework.Reason{framework.Reasonf("NotEnoughResources", "0 of 2 tasks placeable")}}}
	w.Apply(snap, outcomes, nil, metav1.NewTime(now))
	known := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.podGroups) + len(w.reasons)
	}
	if known() != 2 {
		t.Fatalf("after a cycle: %d entries (PodGroup UID, reasons), want 2", known())
	}
	now = now.Add(ResendAfter)
	w.Apply(snap, outcomes, nil, metav1.NewTime(now))
	if known() != 2 {
		t.Fatalf("a job still there was forgotten at the sweep: %d entries, want 2", known())
	}
	empty := api.Build(api.Objects{})
	now = now.Add(time.Second)
	w.Apply(empty, nil, nil, metav1.NewTime(now))
	if known() != 2 {
		t.Fatalf("forgotten before the next sweep: %d entries, want 2 until then", known())
	}
	now = now.Add(ResendAfter)
	w.Apply(empty, nil, nil, metav1.NewTime(now))
	if known() != 0 {
		t.Errorf("a gone job's entries kept past the sweep: %d", known())
	}
}

// jobSnapshot is a snapshot of one job: PodGroup ns/pg (Inqueue, minMember
// min, UID uid) and its pods.
func jobSnapshot(uid types.UID, min int32, pods ...*corev1.Pod) *api.Snapshot {
	pg := schedtesting.MakePodGroup("pg", "ns").MinMember(min).Phase(schedulingv1beta1.PodGroupInqueue).Obj()
	pg.UID = uid
	return api.Build(api.Objects{Pods: pods, PodGroups: []*schedulingv1beta1.PodGroup{pg}})
}

// TestPlacedGangWaitsForItsBinds: a gang placed in a cycle shows Running
// only after its binds are done and its pods started, in one write: while
// its binds are in flight nothing is queued (and its admission, queued
// before, is dropped), and the wait for its pods counts from its binds.
func TestPlacedGangWaitsForItsBinds(t *testing.T) {
	w := NewWriter(nil, nil)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	const key = "podgroup/ns/pg"
	touched := map[api.JobID]bool{"ns/pg": true}
	cycle := func(node string, running bool, status api.TaskStatus) {
		var pods []*corev1.Pod
		for _, name := range []string{"a", "b"} {
			p := st.MakePod("ns", name).Group("pg").Node(node)
			if running {
				p = p.Phase(corev1.PodRunning)
			}
			pods = append(pods, p.Obj())
		}
		snap := jobSnapshot("", 2, pods...)
		job := snap.Jobs["ns/pg"]
		job.PodGroup.Status.Phase = schedulingv1beta1.PodGroupPending
		job.Phase = schedulingv1beta1.PodGroupInqueue
		if status != 0 {
			for _, task := range job.Tasks {
				job.SetTaskStatus(task, status)
			}
		}
		w.Apply(snap, nil, touched, metav1.NewTime(now))
	}
	due := func() (time.Time, bool) {
		w.mu.Lock()
		defer w.mu.Unlock()
		p, ok := w.pending[key]
		return p.due, ok
	}

	cycle("", false, 0) // admitted, its pods all there: waits for its placement
	if d, ok := due(); !ok || !d.Equal(now.Add(StartHold)) {
		t.Fatalf("admission: queued %v due %s, want due %s", ok, d, now.Add(StartHold))
	}
	now = now.Add(5 * time.Second)
	cycle("n1", false, api.Binding)
	if d, ok := due(); ok {
		t.Fatalf("binds in flight: a write is queued, due %s", d)
	}
	if _, ok := w.written[key]; ok {
		t.Fatal("binds in flight: the dropped admission's record still holds back its change")
	}
	now = now.Add(20 * time.Second)
	cycle("n1", false, 0) // bound, not started
	bound := now
	if d, ok := due(); !ok || !d.Equal(bound.Add(StartHold)) {
		t.Fatalf("bound: queued %v due %s, want due %s (StartHold from the binds)", ok, d, bound.Add(StartHold))
	}
	now = now.Add(12 * time.Second)
	cycle("n1", true, 0)
	d, ok := due()
	if !ok || !d.Equal(now) {
		t.Fatalf("started: queued %v due %s, want due now (%s)", ok, d, now)
	}
	if got := w.written[key].desired.(schedulingv1beta1.PodGroupStatus); got.Phase != schedulingv1beta1.PodGroupRunning || got.Running != 2 {
		t.Errorf("the write queued shows %s with %d running, want Running with 2", got.Phase, got.Running)
	}
}

// TestWriteWokenEarlyWaitsUntilDue: the queue wakes a key at the earliest
// time it was added for; a write woken before it is due is not made then
// and waits on, and is made once due.
func TestWriteWokenEarlyWaitsUntilDue(t *testing.T) {
	w := NewWriter(nil, nil)
	defer w.queue.ShutDown()
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	writes := 0
	w.enqueue("podgroup/ns/pg", "", "desired", StartHold, func(context.Context) error {
		writes++
		return nil
	})
	w.queue.Add("podgroup/ns/pg") // woken by an earlier, dropped hold's time
	w.processNext(t.Context())
	if writes != 0 {
		t.Fatalf("a write due in %s was made when woken early", StartHold)
	}
	now = now.Add(StartHold)
	w.queue.Add("podgroup/ns/pg")
	w.processNext(t.Context())
	if writes != 1 {
		t.Errorf("%d writes once due, want 1", writes)
	}
}
