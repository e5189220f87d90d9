package lifecycle

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/federation/resources"
	"github.com/caldera-sh/caldera/pkg/hyperjob/split"
)

var decideNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// trainHJ is a HyperJob of two 1-CPU children, as written.
func trainHJ() *trainingv1alpha1.HyperJob {
	pod := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	return &trainingv1alpha1.HyperJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hj", UID: "uid-1", Generation: 1, Finalizers: []string{Finalizer}},
		Spec: trainingv1alpha1.HyperJobSpec{ReplicatedJobs: []trainingv1alpha1.ReplicatedJob{{
			Name: "train", Replicas: 2,
			TemplateSpec: batchv1alpha1.JobSpec{MinAvailable: 1, Tasks: []batchv1alpha1.TaskSpec{{Name: "worker", Replicas: 1, Template: pod}}},
		}}},
	}
}

// roomy has room for both children in each of two clusters.
func roomy() *Capacity {
	return &Capacity{Clusters: []split.Cluster{
		{Name: "east", Free: resources.Amounts{corev1.ResourceCPU: 4000, corev1.ResourcePods: 100000}},
		{Name: "west", Free: resources.Amounts{corev1.ResourceCPU: 4000, corev1.ResourcePods: 100000}},
	}}
}

// planned returns the HyperJob with the plan a first decision records.
func planned(t *testing.T, hj *trainingv1alpha1.HyperJob) (*trainingv1alpha1.HyperJob, *Record) {
	t.Helper()
	d := Decide(Input{HyperJob: hj, Capacity: roomy(), Now: decideNow})
	if d.Record == nil || len(d.Record.Children) != 2 {
		t.Fatalf("first decision recorded %+v, want a plan of two children", d.Record)
	}
	return withRecord(t, hj, d.Record), d.Record
}

func withRecord(t *testing.T, hj *trainingv1alpha1.HyperJob, rec *Record) *trainingv1alpha1.HyperJob {
	t.Helper()
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	out := hj.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[PlanRecordAnnotation] = string(raw)
	return out
}

// made returns the jobs a decision creates, in the given phase.
func made(d Decision, phase batchv1alpha1.JobPhase) []batchv1alpha1.Job {
	var out []batchv1alpha1.Job
	for _, c := range d.Create {
		j := *c.Job.DeepCopy()
		j.Status.State.Phase = phase
		out = append(out, j)
	}
	return out
}

func reasons(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Reason)
	}
	return out
}

// TestDecidePlansThenMakesChildren: a new HyperJob first gets its
// finalizer and a recorded plan (no child yet), asking for the clusters'
// capacity once; then each child's policy and job, pinned and annotated;
// then only the missing ones.
func TestDecidePlansThenMakesChildren(t *testing.T) {
	hj := trainHJ()
	hj.Finalizers = nil
	if d := Decide(Input{HyperJob: hj, Now: decideNow}); !d.NeedCapacity || d.Record != nil || d.AddFinalizer {
		t.Fatalf("without capacity: %+v, want only NeedCapacity", d)
	}
	d := Decide(Input{HyperJob: hj, Capacity: roomy(), Now: decideNow})
	if !d.AddFinalizer || !d.Requeue || len(d.Create) != 0 || d.Record == nil || d.Record.Attempt != 1 || d.Record.ID == "" {
		t.Fatalf("plan decision: %+v", d)
	}
	if diff := cmp.Diff([]string{ReasonPlanned}, reasons(d.Events)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	again := Decide(Input{HyperJob: hj, Capacity: roomy(), Now: decideNow.Add(time.Hour)})
	if again.Record.ID != d.Record.ID {
		t.Errorf("plan ID %s then %s: the same plan must get the same ID", d.Record.ID, again.Record.ID)
	}

	hj.Finalizers = []string{Finalizer}
	hj = withRecord(t, hj, d.Record)
	d = Decide(Input{HyperJob: hj, Now: decideNow})
	if d.AddFinalizer || len(d.Create) != 2 || d.Record != nil {
		t.Fatalf("making children: %+v", d)
	}
	for i, c := range d.Create {
		pc := hj.Annotations[PlanRecordAnnotation]
		if c.Job.Name != c.Policy.Name || !strings.Contains(pc, c.Job.Name) {
			t.Errorf("child %d: job %s, policy %s, want the planned name for both", i, c.Job.Name, c.Policy.Name)
		}
		if got := c.Job.Annotations[trainingv1alpha1.PlanAnnotation]; got != d2ID(t, hj) {
			t.Errorf("child %s plan annotation %q", c.Job.Name, got)
		}
		if got := c.Job.Annotations[trainingv1alpha1.ChildrenAnnotation]; got != "2" {
			t.Errorf("child %s children annotation %q, want 2", c.Job.Name, got)
		}
		if ca := c.Policy.Spec.Placement.ClusterAffinity; ca == nil || len(ca.ClusterNames) != 1 {
			t.Errorf("child %s policy pins to %+v, want one cluster", c.Job.Name, ca)
		}
		if len(c.Job.OwnerReferences) != 1 || c.Job.OwnerReferences[0].UID != hj.UID {
			t.Errorf("child %s owners %+v", c.Job.Name, c.Job.OwnerReferences)
		}
	}
	if d.Status == nil || !meta.IsStatusConditionTrue(d.Status.Conditions, ConditionPlanned) {
		t.Errorf("status %+v, want Planned True", d.Status)
	}

	one := made(d, batchv1alpha1.JobPending)[:1]
	d = Decide(Input{HyperJob: hj, Children: one, Now: decideNow})
	if len(d.Create) != 1 || d.Create[0].Job.Name == one[0].Name {
		t.Errorf("with %s made, creating %d children, want only the other", one[0].Name, len(d.Create))
	}
}

func d2ID(t *testing.T, hj *trainingv1alpha1.HyperJob) string {
	t.Helper()
	rec, err := ReadRecord(hj)
	if err != nil || rec == nil {
		t.Fatalf("record: %v %v", rec, err)
	}
	return rec.ID
}

// TestDecideWaits: an invalid HyperJob and one no plan fits wait with
// Planned False and why; the event is recorded once, not at every retry.
func TestDecideWaits(t *testing.T) {
	full := &Capacity{Clusters: []split.Cluster{{Name: "east", Free: resources.Amounts{corev1.ResourceCPU: 500}}}}
	d := Decide(Input{HyperJob: trainHJ(), Capacity: full, Retry: 30 * time.Second, Now: decideNow})
	if d.Record != nil || d.RequeueAfter != 30*time.Second || d.Status == nil {
		t.Fatalf("infeasible: %+v", d)
	}
	c := meta.FindStatusCondition(d.Status.Conditions, ConditionPlanned)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonWaiting || !strings.HasPrefix(c.Message, "no plan fits the clusters now") {
		t.Errorf("condition %+v", c)
	}
	if diff := cmp.Diff([]string{ReasonWaiting}, reasons(d.Events)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	waiting := trainHJ()
	waiting.Status = *d.Status
	if again := Decide(Input{HyperJob: waiting, Capacity: full, Retry: 30 * time.Second, Now: decideNow.Add(time.Minute)}); len(again.Events) != 0 || again.Status != nil {
		t.Errorf("still waiting: events %v, status %+v; want neither", again.Events, again.Status)
	}

	invalid := trainHJ()
	gpu := "nvidia.com/gpu"
	invalid.Spec.ReplicatedJobs[0].SplitPolicy = &trainingv1alpha1.SplitPolicy{Mode: trainingv1alpha1.SplitModeAuto, AcceleratorType: &gpu}
	d = Decide(Input{HyperJob: invalid, Now: decideNow})
	if d.NeedCapacity || d.Status == nil {
		t.Fatalf("invalid: %+v, want a status without asking for capacity", d)
	}
	if c := meta.FindStatusCondition(d.Status.Conditions, ConditionPlanned); c == nil || c.Reason != ReasonInvalid || !strings.Contains(c.Message, "acceleratorType") {
		t.Errorf("invalid condition %+v", c)
	}

	pooled := trainHJ()
	pooled.Spec.ReplicatedJobs[0].TemplateSpec.Tasks[0].Template.Spec.NodeSelector = map[string]string{"gpu.model": "h100"}
	listing := roomy()
	listing.PoolLabels, listing.Listing = []string{"gpu.model"}, []string{"east"}
	d = Decide(Input{HyperJob: pooled, Capacity: listing, Now: decideNow})
	if c := meta.FindStatusCondition(d.Status.Conditions, ConditionPlanned); c == nil || !strings.Contains(c.Message, "listing the nodes of east") || d.RequeueAfter != time.Second {
		t.Errorf("pools being listed: condition %+v, requeue %s", c, d.RequeueAfter)
	}
}

// TestDecideReplacesStaleChildren: children of another plan go; a spec
// change before any child started deletes them all and plans again once
// they are gone; a broken record is replanned from attempt 1.
func TestDecideReplacesStaleChildren(t *testing.T) {
	hj, rec := planned(t, trainHJ())
	kids := made(Decide(Input{HyperJob: hj, Now: decideNow}), batchv1alpha1.JobPending)
	stale := kids[0].DeepCopy()
	stale.Name, stale.Annotations[trainingv1alpha1.PlanAnnotation] = "hj-old", "old"
	d := Decide(Input{HyperJob: hj, Children: append(kids, *stale), Released: &Released{}, Now: decideNow})
	if diff := cmp.Diff([]string{"hj-old"}, d.Delete); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}

	changed := hj.DeepCopy()
	changed.Generation = 2
	d = Decide(Input{HyperJob: changed, Children: kids, Now: decideNow})
	if len(d.Delete) != 2 || d.RequeueAfter != time.Second || d.Record != nil {
		t.Errorf("spec changed before start: %+v, want both children deleted first", d)
	}
	d = Decide(Input{HyperJob: changed, Capacity: roomy(), Now: decideNow})
	if d.Record == nil || d.Record.Attempt != rec.Attempt+1 || d.Record.Generation != 2 {
		t.Errorf("replanned %+v, want attempt %d for generation 2", d.Record, rec.Attempt+1)
	}
	kids[0].Status.Running = 1
	if d = Decide(Input{HyperJob: changed, Children: kids, Now: decideNow}); len(d.Delete) != 0 {
		t.Errorf("spec changed after a child started: deleted %v, want the running plan kept", d.Delete)
	}

	broken := hj.DeepCopy()
	broken.Annotations[PlanRecordAnnotation] = "{"
	d = Decide(Input{HyperJob: broken, Capacity: roomy(), Now: decideNow})
	if d.BrokenRecord == nil || d.Record == nil || d.Record.Attempt != 1 {
		t.Errorf("broken record: %+v", d)
	}
}

// TestDecideFailurePolicy: RestartChild deletes the failed child and
// counts a restart; RestartAll also clears the plan; Fail records why and
// the status says Failed once nothing runs.
func TestDecideFailurePolicy(t *testing.T) {
	for _, c := range []struct {
		action      trainingv1alpha1.FailureAction
		deleted     int
		restart     bool
		clearPlan   bool
		failedIsSet bool
	}{
		{action: trainingv1alpha1.RestartChild, deleted: 1, restart: true},
		{action: trainingv1alpha1.RestartAll, deleted: 2, restart: true, clearPlan: true},
		{action: trainingv1alpha1.Fail, deleted: 1, failedIsSet: true},
	} {
		t.Run(string(c.action), func(t *testing.T) {
			base := trainHJ()
			base.Spec.FailurePolicy = &trainingv1alpha1.FailurePolicy{Action: c.action}
			hj, _ := planned(t, base)
			kids := made(Decide(Input{HyperJob: hj, Now: decideNow}), batchv1alpha1.JobRunning)
			kids[1].Status.State.Phase = batchv1alpha1.JobFailed
			d := Decide(Input{HyperJob: hj, Children: kids, Now: decideNow})
			if len(d.Delete) != c.deleted || !d.Requeue || len(d.Create) != 0 {
				t.Fatalf("decision %+v, want %d deleted", d, c.deleted)
			}
			if (d.CountRestart != nil) != c.restart {
				t.Errorf("count restart %v, want %v", d.CountRestart, c.restart)
			}
			if c.clearPlan && (d.Record == nil || len(d.Record.Children) != 0) {
				t.Errorf("record %+v, want the plan cleared", d.Record)
			}
			if c.failedIsSet {
				if d.Record == nil || d.Record.Failed == "" {
					t.Fatalf("record %+v, want why it failed", d.Record)
				}
				failed := withRecord(t, hj, d.Record)
				kids[0].Status.State.Phase = batchv1alpha1.JobTerminated
				d = Decide(Input{HyperJob: failed, Children: kids, Now: decideNow})
				if d.Status == nil || d.Status.Phase != trainingv1alpha1.HyperJobFailedPhase || len(d.Delete) != 0 {
					t.Errorf("after failing: %+v, want phase Failed and nothing deleted", d)
				}
			}
		})
	}
}

// TestDecideMemberLost: a child not finished on a member NotReady for
// LostAfter is lost with it and counts as failed; the failure policy
// decides, RestartChild restarting every child (a lost child cannot be
// made again where it was); without a policy the HyperJob fails once the
// others finish. Before LostAfter the decision comes back when it passes.
func TestDecideMemberLost(t *testing.T) {
	const lostAfter = 5 * time.Minute
	setup := func(t *testing.T, fp *trainingv1alpha1.FailurePolicy) (*trainingv1alpha1.HyperJob, []batchv1alpha1.Job, string) {
		base := trainHJ()
		base.Spec.FailurePolicy = fp
		hj, rec := planned(t, base)
		kids := made(Decide(Input{HyperJob: hj, Now: decideNow}), batchv1alpha1.JobRunning)
		return hj, kids, rec.Children[0].Cluster
	}
	in := func(hj *trainingv1alpha1.HyperJob, kids []batchv1alpha1.Job, cluster string, down time.Duration) Input {
		return Input{HyperJob: hj, Children: kids, Now: decideNow, LostAfter: lostAfter, NotReady: map[string]time.Duration{cluster: down}}
	}

	t.Run("not yet lost", func(t *testing.T) {
		hj, kids, cluster := setup(t, &trainingv1alpha1.FailurePolicy{Action: trainingv1alpha1.Fail})
		d := Decide(in(hj, kids, cluster, 2*time.Minute))
		if len(d.Delete) != 0 || d.Record != nil || d.RequeueAfter != 3*time.Minute {
			t.Errorf("decision %+v, want nothing done and a decision again in 3m", d)
		}
	})
	t.Run("RestartChild restarts all", func(t *testing.T) {
		hj, kids, cluster := setup(t, &trainingv1alpha1.FailurePolicy{Action: trainingv1alpha1.RestartChild})
		d := Decide(in(hj, kids, cluster, lostAfter))
		if len(d.Delete) != 2 || d.CountRestart == nil || d.Record == nil || len(d.Record.Children) != 0 {
			t.Fatalf("decision %+v, want every child deleted, the restart counted and the plan cleared", d)
		}
		want := "child " + kids[0].Name + " lost with its member (member " + cluster + " NotReady for 5m0s)"
		if len(d.Events) != 1 || !strings.Contains(d.Events[0].Message, want) {
			t.Errorf("events %+v, want one saying %q", d.Events, want)
		}
		if kids[0].Status.State.Phase != batchv1alpha1.JobRunning {
			t.Errorf("the input child was changed to %s", kids[0].Status.State.Phase)
		}
	})
	t.Run("Fail", func(t *testing.T) {
		hj, kids, cluster := setup(t, &trainingv1alpha1.FailurePolicy{Action: trainingv1alpha1.Fail})
		d := Decide(in(hj, kids, cluster, time.Hour))
		if d.Record == nil || !strings.Contains(d.Record.Failed, "member "+cluster+" NotReady for 1h0m0s") {
			t.Errorf("record %+v, want the HyperJob failed saying its member was lost", d.Record)
		}
	})
	t.Run("no policy", func(t *testing.T) {
		hj, kids, cluster := setup(t, nil)
		kids[1].Status.State.Phase = batchv1alpha1.JobCompleted
		// Both children are on the lost member (the plan uses the fewest
		// members); the completed one is not lost.
		d := Decide(in(hj, kids, cluster, lostAfter))
		if d.Status == nil || d.Status.Phase != trainingv1alpha1.HyperJobFailedPhase {
			t.Fatalf("status %+v, want Failed", d.Status)
		}
		st := d.Status.ReplicatedJobsStatus[0].JobStates[kids[0].Name]
		if st.Phase != batchv1alpha1.JobFailed || st.Reason != ReasonMemberLost {
			t.Errorf("the lost child's state %+v, want Failed, reason %s", st, ReasonMemberLost)
		}
		if st := d.Status.ReplicatedJobsStatus[0].JobStates[kids[1].Name]; st.Phase != batchv1alpha1.JobCompleted {
			t.Errorf("the completed child's state %+v, want Completed (finished children are never lost)", st)
		}
	})
}

// TestDecideFinishedChildIsNoRollBack: without a failure policy a failed
// child leaves the others running, however long ago they were released:
// the start timeout is about children that never ran, and the HyperJob
// fails once all have finished rather than being planned again.
func TestDecideFinishedChildIsNoRollBack(t *testing.T) {
	hj, _ := planned(t, trainHJ())
	kids := made(Decide(Input{HyperJob: hj, Now: decideNow}), batchv1alpha1.JobRunning)
	kids[1].Status.State.Phase = batchv1alpha1.JobFailed
	d := Decide(Input{HyperJob: hj, Children: kids, Now: decideNow, StartTimeout: time.Minute, Released: &Released{All: true, For: time.Hour}})
	if len(d.Delete) != 0 || d.Record != nil || d.NeedReleased != nil {
		t.Fatalf("one child failed, one running: %+v, want nothing deleted or planned", d)
	}
	kids[0].Status.State.Phase = batchv1alpha1.JobCompleted
	d = Decide(Input{HyperJob: hj, Children: kids, Now: decideNow, StartTimeout: time.Minute, Released: &Released{All: true, For: time.Hour}})
	if len(d.Delete) != 0 || d.Status == nil || d.Status.Phase != trainingv1alpha1.HyperJobFailedPhase {
		t.Errorf("both finished: %+v, want phase Failed and nothing deleted", d)
	}
}

// TestDecideStartTimeout: released children not running ask how long they
// have been released; within the timeout the decision waits the rest;
// past it, every child goes, the plan is cleared and the status says
// RolledBack; enough running forgets the release time.
func TestDecideStartTimeout(t *testing.T) {
	hj, rec := planned(t, trainHJ())
	kids := made(Decide(Input{HyperJob: hj, Now: decideNow}), batchv1alpha1.JobPending)
	in := Input{HyperJob: hj, Children: kids, StartTimeout: 10 * time.Minute, Now: decideNow}
	d := Decide(in)
	if d.NeedReleased == nil || d.NeedReleased.Plan != rec.ID || len(d.NeedReleased.Children) != 2 {
		t.Fatalf("decision %+v, want a question about both children's release", d)
	}
	in.Released = &Released{}
	if d = Decide(in); d.RequeueAfter != 0 || len(d.Delete) != 0 {
		t.Errorf("not released: %+v, want nothing", d)
	}
	in.Released = &Released{All: true, For: 4 * time.Minute}
	if d = Decide(in); d.RequeueAfter != 6*time.Minute || len(d.Delete) != 0 {
		t.Errorf("released 4m ago: requeue %s, deleted %v; want 6m and nothing", d.RequeueAfter, d.Delete)
	}
	in.Released = &Released{All: true, For: 11 * time.Minute}
	d = Decide(in)
	if len(d.Delete) != 2 || d.Record == nil || len(d.Record.Children) != 0 || d.ForgetRelease != rec.ID || d.Status == nil {
		t.Fatalf("rolled back: %+v", d)
	}
	if d.Status.Phase != trainingv1alpha1.HyperJobRestarting {
		t.Errorf("phase %s, want Restarting", d.Status.Phase)
	}
	if c := meta.FindStatusCondition(d.Status.Conditions, ConditionPlanned); c == nil || c.Reason != ReasonRolledBack {
		t.Errorf("condition %+v, want Planned False RolledBack", c)
	}
	if diff := cmp.Diff([]string{ReasonRolledBack}, reasons(d.Events)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	for i := range kids {
		kids[i].Status.State.Phase = batchv1alpha1.JobRunning
	}
	in = Input{HyperJob: hj, Children: kids, StartTimeout: 10 * time.Minute, Now: decideNow}
	if d = Decide(in); d.NeedReleased != nil || d.ForgetRelease != rec.ID || d.Status == nil || d.Status.Phase != trainingv1alpha1.HyperJobRunning {
		t.Errorf("running: %+v, want phase Running and the release forgotten", d)
	}
}

// TestDecideFinalize: a deleted HyperJob's children go, those listed and
// those only its record names, then its finalizer; without the finalizer
// nothing is done.
func TestDecideFinalize(t *testing.T) {
	hj, rec := planned(t, trainHJ())
	kids := made(Decide(Input{HyperJob: hj, Now: decideNow}), batchv1alpha1.JobRunning)
	hj.DeletionTimestamp = &metav1.Time{Time: decideNow}
	d := Decide(Input{HyperJob: hj, Children: kids[:1], Now: decideNow})
	want := []string{kids[0].Name, rec.Children[1].Name}
	if rec.Children[0].Name != kids[0].Name {
		want = []string{kids[0].Name, rec.Children[0].Name}
	}
	if diff := cmp.Diff(want, d.Delete); diff != "" || !d.RemoveFinalizer {
		t.Errorf("remove finalizer %v, deleted (-want +got):\n%s", d.RemoveFinalizer, diff)
	}
	hj.Finalizers = nil
	if d := Decide(Input{HyperJob: hj, Children: kids, Now: decideNow}); len(d.Delete) != 0 || d.RemoveFinalizer {
		t.Errorf("without the finalizer: %+v, want nothing", d)
	}
}
