package lifecycle

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	policyv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/policy/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/hyperjob/split"
)

// Input is what a decision about a HyperJob is made from.
type Input struct {
	HyperJob *trainingv1alpha1.HyperJob
	// Children are the HyperJob's child jobs, sorted by name.
	Children []batchv1alpha1.Job
	// Capacity is what the clusters offer a plan; nil until a decision
	// asks for it (Decision.NeedCapacity).
	Capacity *Capacity
	// Released says whether the plan's children were all released; nil
	// until a decision asks for it (Decision.NeedReleased).
	Released *Released
	// StartTimeout is how long released children may take to run before
	// the plan is rolled back; Retry how often a HyperJob no plan fits is
	// planned again.
	StartTimeout, Retry time.Duration
	// NotReady is, for each member cluster that is not Ready, how long it
	// has not been. A child not finished on a member NotReady for
	// LostAfter is lost with it: it counts as failed (state reason
	// MemberLost), and the failure policy decides. 0 never loses one.
	NotReady  map[string]time.Duration
	LostAfter time.Duration
	Now       time.Time
}

// Capacity is what the Ready member clusters have free.
type Capacity struct {
	Clusters []split.Cluster
	// PoolLabels are the node labels the clusters' pools are grouped by;
	// Listing the pools whose nodes are still being listed, so that their
	// free capacity is not known yet.
	PoolLabels, Listing []string
}

// Released is whether every child's binding was released (placed by the
// dispatcher, or handed to Karmada's scheduler), and for how long.
type Released struct {
	All bool
	For time.Duration
}

// ReleaseQuery asks whether the bindings of a plan's children are all
// released, and since when.
type ReleaseQuery struct {
	// Plan is the plan's ID; Children name its child jobs.
	Plan     string
	Children []string
}

// Event is a Kubernetes Event to record on the HyperJob.
type Event struct {
	Type, Reason, Message string
}

// ChildObjects are a child job to create and its PropagationPolicy, which
// pins it to its cluster and is created first.
type ChildObjects struct {
	Policy *policyv1alpha1.PropagationPolicy
	Job    *batchv1alpha1.Job
}

// Decision is what the controller does for a HyperJob, in this order:
// finalizer added; Delete; finalizer removed; Record written; Create;
// Status or CountRestart written; Events recorded.
type Decision struct {
	// NeedCapacity or NeedReleased: decide again with Input.Capacity or
	// Input.Released filled in. Nothing else is set.
	NeedCapacity                  bool
	NeedReleased                  *ReleaseQuery
	AddFinalizer, RemoveFinalizer bool
	// Delete names children whose job and policy are deleted.
	Delete []string
	// Record replaces the HyperJob's plan record (with an optimistic lock).
	Record *Record
	Create []ChildObjects
	// Status is the HyperJob's new status; nil when it does not change.
	Status *trainingv1alpha1.HyperJobStatus
	// CountRestart adds one to status.retryCount and sets this phase (with
	// an optimistic lock), after the deletions it counts.
	CountRestart *trainingv1alpha1.HyperJobPhase
	Events       []Event
	// ForgetRelease names a plan whose release time is no longer needed.
	ForgetRelease string
	Requeue       bool
	RequeueAfter  time.Duration
	// BrokenRecord is why the record did not read; a new plan replaces it.
	BrokenRecord error
	// Err is a failure to retry with backoff.
	Err error
}

// Decide computes what to do for a HyperJob:
//
//  1. Plan: the split sizes and places the children on what the clusters
//     have free. While no plan fits, the HyperJob waits (condition
//     Planned False, reason Waiting, with why) and is planned again.
//  2. The plan is recorded on the HyperJob before any child is made.
//  3. Each child's PropagationPolicy, then the child, owned by the
//     HyperJob and annotated with the plan and the gang's size.
//  4. Failed children, and children lost with their member, go as the
//     failure policy says (OnFailure); released children not running
//     within the start timeout roll the plan back (Start).
//  5. The status is aggregated from the children; a deleted HyperJob's
//     children go before its finalizer does.
//
// A child on a member NotReady for less than LostAfter is decided again
// when it would be lost.
func Decide(in Input) Decision {
	in.Children = markLost(in)
	d := decide(in)
	if w := nextLoss(in); w > 0 && !d.NeedCapacity && d.NeedReleased == nil && !d.Requeue && (d.RequeueAfter == 0 || w < d.RequeueAfter) {
		d.RequeueAfter = w
	}
	return d
}

// plannedClusters maps the HyperJob's recorded children to their clusters.
func plannedClusters(hj *trainingv1alpha1.HyperJob) map[string]string {
	rec, err := ReadRecord(hj)
	if err != nil || rec == nil {
		return nil
	}
	out := make(map[string]string, len(rec.Children))
	for _, c := range rec.Children {
		out[c.Name] = c.Cluster
	}
	return out
}

// markLost returns the children with those lost with their member shown
// Failed, reason MemberLost, saying how (copies; the input is not
// changed).
func markLost(in Input) []batchv1alpha1.Job {
	if in.LostAfter <= 0 || len(in.NotReady) == 0 || len(in.Children) == 0 {
		return in.Children
	}
	clusters := plannedClusters(in.HyperJob)
	out := in.Children
	copied := false
	for i, c := range in.Children {
		cluster := clusters[c.Name]
		down, ok := in.NotReady[cluster]
		if done, _ := Finished(c.Status.State.Phase); done || !ok || down < in.LostAfter {
			continue
		}
		if !copied {
			out = slices.Clone(in.Children)
			copied = true
		}
		lost := c.DeepCopy()
		lost.Status.State = batchv1alpha1.JobState{Phase: batchv1alpha1.JobFailed, Reason: ReasonMemberLost,
			Message: fmt.Sprintf("member %s NotReady for %s", cluster, down.Round(time.Second))}
		out[i] = *lost
	}
	return out
}

// nextLoss is how long until the next child not finished on a NotReady
// member is lost; 0 when none is on the way to it.
func nextLoss(in Input) time.Duration {
	if in.LostAfter <= 0 || len(in.NotReady) == 0 {
		return 0
	}
	clusters := plannedClusters(in.HyperJob)
	var next time.Duration
	for _, c := range in.Children {
		down, ok := in.NotReady[clusters[c.Name]]
		if done, _ := Finished(c.Status.State.Phase); done || !ok || down >= in.LostAfter {
			continue
		}
		if w := in.LostAfter - down; next == 0 || w < next {
			next = w
		}
	}
	return next
}

func decide(in Input) Decision {
	hj := in.HyperJob
	if hj.DeletionTimestamp != nil {
		return finalize(in)
	}
	d := Decision{AddFinalizer: !slices.Contains(hj.Finalizers, Finalizer)}
	rec, err := ReadRecord(hj)
	if err != nil {
		d.BrokenRecord = err
		rec = &Record{}
	}
	if rec == nil || len(rec.Children) == 0 || rec.Generation != hj.Generation && !started(in.Children) {
		return plan(in, rec, d)
	}

	// Children of other plans go; those of this one are made.
	var current []batchv1alpha1.Job
	for _, c := range in.Children {
		if c.Annotations[trainingv1alpha1.PlanAnnotation] == rec.ID {
			current = append(current, c)
		} else {
			d.Delete = append(d.Delete, c.Name)
		}
	}
	if rec.Failed == "" {
		if fd := OnFailure(hj.Spec.FailurePolicy, hj.Status.RetryCount, Of(current)); fd.Action != None {
			return onFailure(hj, rec, fd, d)
		}
		if d.Create, d.Err = create(hj, rec, current); d.Err != nil {
			return d
		}
	}
	now := metav1.NewTime(in.Now)
	st := Aggregate(hj, rec, current, now)
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionPlanned, Status: metav1.ConditionTrue, Reason: ReasonPlanned,
		Message: fmt.Sprintf("%d child jobs", len(rec.Children)), ObservedGeneration: hj.Generation, LastTransitionTime: now})
	if rec.Failed != "" {
		return withStatus(d, hj, st)
	}

	// Released children must start in time.
	need := len(rec.Children)
	if rec.MinAvailable > 0 {
		need = rec.MinAvailable
	}
	states := Of(current)
	if Running(states) >= need {
		d.ForgetRelease = rec.ID
		return withStatus(d, hj, st)
	}
	if len(current) < len(rec.Children) {
		return withStatus(d, hj, st)
	}
	for _, c := range states {
		if done, _ := Finished(c.Phase); done {
			// Past starting: a finished child is the failure policy's
			// (without one, the others run on and the HyperJob ends when
			// they do), never a reason to roll the plan back.
			d.ForgetRelease = rec.ID
			return withStatus(d, hj, st)
		}
	}
	if in.Released == nil {
		q := &ReleaseQuery{Plan: rec.ID}
		for _, c := range current {
			q.Children = append(q.Children, c.Name)
		}
		return Decision{NeedReleased: q}
	}
	if !in.Released.All {
		return withStatus(d, hj, st)
	}
	sd := Start(need, states, in.Released.For, in.StartTimeout)
	if !sd.RollBack {
		d.RequeueAfter = sd.Wait
		return withStatus(d, hj, st)
	}
	// Roll back: every child goes, and the next plan starts over.
	for _, c := range current {
		d.Delete = append(d.Delete, c.Name)
	}
	d.ForgetRelease = rec.ID
	d.Record = &Record{Generation: rec.Generation, Attempt: rec.Attempt}
	d.Events = append(d.Events, Event{corev1.EventTypeWarning, ReasonRolledBack, sd.Message})
	st.Phase = trainingv1alpha1.HyperJobRestarting
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionPlanned, Status: metav1.ConditionFalse, Reason: ReasonRolledBack,
		Message: sd.Message, ObservedGeneration: hj.Generation, LastTransitionTime: now})
	d.Requeue = true
	return withStatus(d, hj, st)
}

// finalize deletes the children, those listed and those the record
// names, then lets the HyperJob go.
func finalize(in Input) Decision {
	hj := in.HyperJob
	if !slices.Contains(hj.Finalizers, Finalizer) {
		return Decision{}
	}
	d := Decision{RemoveFinalizer: true}
	for _, c := range in.Children {
		d.Delete = append(d.Delete, c.Name)
	}
	if rec, _ := ReadRecord(hj); rec != nil {
		for _, c := range rec.Children {
			if !slices.Contains(d.Delete, c.Name) {
				d.Delete = append(d.Delete, c.Name)
			}
		}
	}
	return d
}

// plan splits the HyperJob over the clusters and records the plan, or says
// why it waits. Nothing of an older plan may run beside the new one.
func plan(in Input, prev *Record, d Decision) Decision {
	hj := in.HyperJob
	if len(in.Children) > 0 {
		for _, c := range in.Children {
			d.Delete = append(d.Delete, c.Name)
		}
		d.RequeueAfter = time.Second
		return d
	}
	sin, err := split.FromHyperJob(hj)
	if err != nil {
		return notPlanned(in, d, ReasonInvalid, err.Error())
	}
	if in.Capacity == nil {
		return Decision{NeedCapacity: true}
	}
	c := in.Capacity
	if len(c.Listing) > 0 && selectsPools(sin, c.PoolLabels) {
		d = notPlanned(in, d, ReasonWaiting, "listing the nodes of "+strings.Join(c.Listing, ", ")+" to know their free capacity per accelerator model")
		d.RequeueAfter = time.Second
		return d
	}
	sin.PoolLabels = c.PoolLabels
	p, err := split.Split(sin, c.Clusters)
	if inf := (*split.Infeasible)(nil); errors.As(err, &inf) {
		d = notPlanned(in, d, ReasonWaiting, "no plan fits the clusters now: "+err.Error())
		d.RequeueAfter = in.Retry
		return d
	}
	if err != nil {
		d.Err = err
		return d
	}
	rec := &Record{Generation: hj.Generation, Attempt: 1}
	if prev != nil {
		rec.Attempt = prev.Attempt + 1
	}
	for _, c := range p.Children {
		rec.Children = append(rec.Children, PlannedChild{Name: c.Name, ReplicatedJob: c.ReplicatedJob, Index: c.Index, Cluster: c.Cluster, Pods: c.Pods})
	}
	if hj.Spec.MinAvailable != nil {
		rec.MinAvailable = min(int(*hj.Spec.MinAvailable), len(rec.Children))
	}
	rec.ID = planID(hj, rec)
	d.Record = rec
	d.Events = append(d.Events, Event{corev1.EventTypeNormal, ReasonPlanned,
		fmt.Sprintf("planned %d child jobs over %s", len(rec.Children), strings.Join(p.Clusters, ", "))})
	d.Requeue = true
	return d
}

// notPlanned sets the Planned condition False for reason, the HyperJob
// pending, with an event when the condition changes.
func notPlanned(in Input, d Decision, reason, msg string) Decision {
	hj := in.HyperJob
	st := *hj.Status.DeepCopy()
	st.ObservedGeneration = hj.Generation
	st.Phase = trainingv1alpha1.HyperJobPending
	if old := meta.FindStatusCondition(st.Conditions, ConditionPlanned); old == nil || old.Reason != reason || old.Message != msg {
		d.Events = append(d.Events, Event{corev1.EventTypeNormal, reason, msg})
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionPlanned, Status: metav1.ConditionFalse, Reason: reason, Message: msg,
		ObservedGeneration: hj.Generation, LastTransitionTime: metav1.NewTime(in.Now)})
	return withStatus(d, hj, st)
}

// onFailure applies the failure policy's decision. A restart is counted
// after its deletions: a crash between them allows one restart more, never
// one less.
func onFailure(hj *trainingv1alpha1.HyperJob, rec *Record, fd FailureDecision, d Decision) Decision {
	d.Delete = append(d.Delete, fd.Delete...)
	d.Requeue = true
	switch fd.Action {
	case RestartChildren:
		d.Events = append(d.Events, Event{corev1.EventTypeWarning, "RestartingChild", fd.Message})
		d.CountRestart = new(hj.Status.Phase)
	case RestartAll:
		d.Record = &Record{Generation: rec.Generation, Attempt: rec.Attempt}
		d.Events = append(d.Events, Event{corev1.EventTypeWarning, "RestartingAll", fd.Message})
		d.CountRestart = new(trainingv1alpha1.HyperJobRestarting)
	default:
		failed := *rec
		failed.Failed = fd.Message
		d.Record = &failed
		d.Events = append(d.Events, Event{corev1.EventTypeWarning, ReasonFailed, fd.Message})
	}
	return d
}

// create returns the children of the plan not made yet.
func create(hj *trainingv1alpha1.HyperJob, rec *Record, existing []batchv1alpha1.Job) ([]ChildObjects, error) {
	have := map[string]bool{}
	for _, c := range existing {
		have[c.Name] = true
	}
	rjs := map[string]*trainingv1alpha1.ReplicatedJob{}
	for i := range hj.Spec.ReplicatedJobs {
		rjs[hj.Spec.ReplicatedJobs[i].Name] = &hj.Spec.ReplicatedJobs[i]
	}
	owner := metav1.NewControllerRef(hj, trainingv1alpha1.SchemeGroupVersion.WithKind("HyperJob"))
	var out []ChildObjects
	for _, c := range rec.Children {
		if have[c.Name] {
			continue
		}
		rj := rjs[c.ReplicatedJob]
		if rj == nil {
			return nil, fmt.Errorf("plan %s names replicated job %q, which the HyperJob does not have", rec.ID, c.ReplicatedJob)
		}
		labels := map[string]string{trainingv1alpha1.HyperJobNameLabel: hj.Name, trainingv1alpha1.ReplicatedJobNameLabel: c.ReplicatedJob}
		out = append(out, ChildObjects{
			Policy: &policyv1alpha1.PropagationPolicy{
				ObjectMeta: metav1.ObjectMeta{Namespace: hj.Namespace, Name: c.Name, Labels: labels, OwnerReferences: []metav1.OwnerReference{*owner}},
				Spec: policyv1alpha1.PropagationSpec{
					ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: batchv1alpha1.SchemeGroupVersion.String(), Kind: "Job", Name: c.Name}},
					Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{c.Cluster}}},
					Priority:          new(int32(PolicyPriority)),
				},
			},
			Job: &batchv1alpha1.Job{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: hj.Namespace, Name: c.Name, Labels: labels, OwnerReferences: []metav1.OwnerReference{*owner},
					Annotations: map[string]string{
						trainingv1alpha1.PlanAnnotation:         rec.ID,
						trainingv1alpha1.ChildrenAnnotation:     strconv.Itoa(len(rec.Children)),
						trainingv1alpha1.MinAvailableAnnotation: strconv.Itoa(rec.MinAvailable),
					},
				},
				Spec: split.ChildSpec(rj, &split.Child{Pods: c.Pods}),
			},
		})
	}
	return out, nil
}

// withStatus sets the decision's status when it differs from the
// HyperJob's.
func withStatus(d Decision, hj *trainingv1alpha1.HyperJob, st trainingv1alpha1.HyperJobStatus) Decision {
	if !equality.Semantic.DeepEqual(hj.Status, st) {
		d.Status = &st
	}
	return d
}

// started reports whether any child has pods: a spec change then waits for
// the next plan rather than tearing running work down.
func started(children []batchv1alpha1.Job) bool {
	for _, c := range children {
		if c.Status.Pending+c.Status.Running+c.Status.Succeeded+c.Status.Failed > 0 {
			return true
		}
	}
	return false
}

// selectsPools says whether a replicated job's pods select nodes by a pool
// label.
func selectsPools(in *split.Input, poolLabels []string) bool {
	for _, rj := range in.ReplicatedJobs {
		for k := range rj.Selector {
			if slices.Contains(poolLabels, k) {
				return true
			}
		}
	}
	return false
}
