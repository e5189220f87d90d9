// Package core decides what a JobFlow needs now, from the JobFlow, the
// JobTemplates it names, the Jobs it owns and the time: the Jobs of the
// flows whose dependencies hold, the Jobs to delete once the flow succeeds
// (retain policy delete), and its status. It reads nothing else and writes
// nothing; the controller in the parent package carries the decision out.
package core

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	"github.com/caldera-sh/caldera/apis/flow/v1alpha1/validation"
)

// Labels and annotations on the Jobs a JobFlow creates.
const (
	// FlowLabel names the JobFlow.
	FlowLabel = "flow.caldera.sh/jobflow"
	// TemplateAnnotation names the JobTemplate the Job was made from.
	TemplateAnnotation = "flow.caldera.sh/jobtemplate"
)

// Input is what the decision reads.
type Input struct {
	Flow *flowv1alpha1.JobFlow
	// Templates are the namespace's JobTemplates the flows name, by name.
	Templates map[string]*flowv1alpha1.JobTemplate
	// Jobs are the Jobs the JobFlow owns, by name.
	Jobs map[string]*batchv1alpha1.Job
	// Probes are the answers to ProbesToRun's probes: true for those that
	// held. A probe not run counts as not holding.
	Probes map[ProbeRef]bool
	Now    time.Time
}

// Event is a Kubernetes event for the JobFlow.
type Event struct {
	Type, Reason, Message string
}

// Decision is what the JobFlow needs.
type Decision struct {
	Create []*batchv1alpha1.Job
	Delete []*batchv1alpha1.Job
	Status flowv1alpha1.JobFlowStatus
	Events []Event
	// RequeueAfter asks to decide again then: a flow waits on probes that
	// did not hold yet.
	RequeueAfter time.Duration
}

// ProbePeriod is how often the probes of a waiting flow are run again.
const ProbePeriod = 5 * time.Second

// finished phases of a Job.
func done(p batchv1alpha1.JobPhase) bool {
	switch p {
	case batchv1alpha1.JobCompleted, batchv1alpha1.JobFailed, batchv1alpha1.JobTerminated, batchv1alpha1.JobAborted:
		return true
	}
	return false
}

// Decide decides what the JobFlow needs at in.Now.
func Decide(in Input) Decision {
	jf := in.Flow
	var d Decision
	if jf.Status.State.Phase == flowv1alpha1.Succeed {
		// Done for good: the status stays as it was when the last Job
		// completed, also once the retain policy has deleted the Jobs.
		d.Status = *jf.Status.DeepCopy()
		if jf.Spec.JobRetainPolicy == flowv1alpha1.Delete {
			for _, f := range jf.Spec.Flows {
				if j := in.Jobs[validation.JobName(jf.Name, f.Name)]; j != nil {
					d.Delete = append(d.Delete, j)
				}
			}
		}
		return d
	}
	prev := map[string]flowv1alpha1.JobStatus{}
	for _, s := range jf.Status.JobStatusList {
		prev[s.Name] = s
	}
	st := flowv1alpha1.JobFlowStatus{Conditions: map[string]flowv1alpha1.Condition{}}
	completed, failed := 0, 0
	for _, f := range jf.Spec.Flows {
		name := validation.JobName(jf.Name, f.Name)
		j := in.Jobs[name]
		if j == nil && jf.DeletionTimestamp == nil && ready(in, f) {
			tmpl := in.Templates[f.Name]
			if tmpl == nil {
				d.Events = append(d.Events, Event{corev1.EventTypeWarning, "TemplateNotFound",
					fmt.Sprintf("flow %s waits for JobTemplate %s/%s", f.Name, jf.Namespace, f.Name)})
			} else if job, err := jobFor(jf, f, tmpl); err != nil {
				d.Events = append(d.Events, Event{corev1.EventTypeWarning, "InvalidPatch", fmt.Sprintf("flow %s: %v", f.Name, err)})
			} else {
				d.Create = append(d.Create, job)
				d.Events = append(d.Events, Event{corev1.EventTypeNormal, "SuccessfulCreate", fmt.Sprintf("created job %s from JobTemplate %s", name, f.Name)})
				j = job
			}
		}
		if j == nil {
			st.PendingJobs = append(st.PendingJobs, name)
			continue
		}
		phase := j.Status.State.Phase
		switch phase {
		case batchv1alpha1.JobCompleted:
			st.CompletedJobs = append(st.CompletedJobs, name)
			completed++
		case batchv1alpha1.JobFailed:
			st.FailedJobs = append(st.FailedJobs, name)
			failed++
		case batchv1alpha1.JobTerminated, batchv1alpha1.JobAborted:
			st.TerminatedJobs = append(st.TerminatedJobs, name)
			failed++
		case "", batchv1alpha1.JobPending:
			st.PendingJobs = append(st.PendingJobs, name)
		case batchv1alpha1.JobRunning, batchv1alpha1.JobRestarting, batchv1alpha1.JobCompleting, batchv1alpha1.JobTerminating, batchv1alpha1.JobAborting:
			st.RunningJobs = append(st.RunningJobs, name)
		default:
			st.UnKnowJobs = append(st.UnKnowJobs, name)
		}
		st.JobStatusList = append(st.JobStatusList, jobStatus(prev[name], j, in.Now))
		created := j.CreationTimestamp
		if created.IsZero() {
			created = metav1.NewTime(in.Now)
		}
		end := in.Now
		if done(phase) && !j.Status.State.LastTransitionTime.IsZero() {
			end = j.Status.State.LastTransitionTime.Time
		}
		st.Conditions[name] = flowv1alpha1.Condition{
			Phase: phase, CreateTime: &created, RunningDuration: &metav1.Duration{Duration: end.Sub(created.Time).Round(time.Second)},
			TaskStatusCount: j.Status.TaskStatusCount,
		}
	}
	switch {
	case jf.DeletionTimestamp != nil:
		st.State.Phase = flowv1alpha1.Terminating
	case failed > 0:
		st.State.Phase = flowv1alpha1.Failed
	case completed == len(jf.Spec.Flows) && completed > 0:
		st.State.Phase = flowv1alpha1.Succeed
	case len(st.JobStatusList) > 0:
		st.State.Phase = flowv1alpha1.Running
	default:
		st.State.Phase = flowv1alpha1.Pending
	}
	if st.State.Phase != jf.Status.State.Phase && (st.State.Phase == flowv1alpha1.Succeed || st.State.Phase == flowv1alpha1.Failed) {
		typ := corev1.EventTypeNormal
		if st.State.Phase == flowv1alpha1.Failed {
			typ = corev1.EventTypeWarning
		}
		d.Events = append(d.Events, Event{typ, string(st.State.Phase), fmt.Sprintf("%d of %d jobs completed, %d failed or terminated", completed, len(jf.Spec.Flows), failed)})
	}
	if st.State.Phase == flowv1alpha1.Succeed && jf.Spec.JobRetainPolicy == flowv1alpha1.Delete {
		for _, f := range jf.Spec.Flows {
			if j := in.Jobs[validation.JobName(jf.Name, f.Name)]; j != nil {
				d.Delete = append(d.Delete, j)
			}
		}
	}
	if len(st.Conditions) == 0 {
		st.Conditions = nil
	}
	d.Status = st
	// A probe that did not hold kept its flow from starting: ask again.
	for _, p := range ProbesToRun(in) {
		if !in.Probes[p.Ref] {
			d.RequeueAfter = ProbePeriod
			break
		}
	}
	return d
}

// ready reports whether a flow's dependencies hold: every target's Job has
// completed, or, when the flow lists probes, every probe holds: each listed
// task of a target has a pod in its phase, and each HTTP and TCP probe
// answered (in.Probes).
func ready(in Input, f flowv1alpha1.Flow) bool {
	jf, jobs := in.Flow, in.Jobs
	if f.DependsOn == nil {
		return true
	}
	var targets []*batchv1alpha1.Job
	for _, t := range f.DependsOn.Targets {
		j := jobs[validation.JobName(jf.Name, t)]
		if j == nil {
			return false
		}
		targets = append(targets, j)
	}
	if p := f.DependsOn.Probe; p != nil && len(p.TaskStatusList)+len(p.HTTPGetList)+len(p.TCPSocketList) > 0 {
		if !probesHold(in, f) {
			return false
		}
		for _, ts := range p.TaskStatusList {
			if !slices.ContainsFunc(targets, func(j *batchv1alpha1.Job) bool {
				return j.Status.TaskStatusCount[ts.TaskName].Phase[corev1.PodPhase(ts.Phase)] > 0
			}) {
				return false
			}
		}
		return true
	}
	for _, j := range targets {
		if j.Status.State.Phase != batchv1alpha1.JobCompleted {
			return false
		}
	}
	return true
}

// jobFor is a flow's Job: the template's spec with the flow's patch.
func jobFor(jf *flowv1alpha1.JobFlow, f flowv1alpha1.Flow, tmpl *flowv1alpha1.JobTemplate) (*batchv1alpha1.Job, error) {
	spec := tmpl.Spec.DeepCopy()
	if f.Patch != nil && f.Patch.JobSpec != nil && len(f.Patch.JobSpec.Raw) > 0 {
		base, err := json.Marshal(spec)
		if err != nil {
			return nil, err
		}
		merged, err := jsonpatch.MergePatch(base, f.Patch.JobSpec.Raw)
		if err != nil {
			return nil, fmt.Errorf("patch.jobSpec: %w", err)
		}
		spec = &batchv1alpha1.JobSpec{}
		if err := json.Unmarshal(merged, spec); err != nil {
			return nil, fmt.Errorf("patch.jobSpec does not make a Job spec: %w", err)
		}
	}
	labels := map[string]string{}
	for k, v := range tmpl.Labels {
		labels[k] = v
	}
	labels[FlowLabel] = jf.Name
	return &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   jf.Namespace,
			Name:        validation.JobName(jf.Name, f.Name),
			Labels:      labels,
			Annotations: map[string]string{TemplateAnnotation: tmpl.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: flowv1alpha1.SchemeGroupVersion.String(), Kind: "JobFlow", Name: jf.Name, UID: jf.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: *spec,
	}, nil
}

// jobStatus is a Job's progress, its history extended when its phase
// changed.
func jobStatus(prev flowv1alpha1.JobStatus, j *batchv1alpha1.Job, now time.Time) flowv1alpha1.JobStatus {
	s := flowv1alpha1.JobStatus{
		Name: j.Name, State: j.Status.State.Phase, StartTimestamp: j.CreationTimestamp, RestartCount: j.Status.RetryCount,
		EndTimestamp: prev.EndTimestamp, RunningHistories: slices.Clone(prev.RunningHistories),
	}
	if s.StartTimestamp.IsZero() {
		s.StartTimestamp = metav1.NewTime(now)
	}
	at := j.Status.State.LastTransitionTime
	if at.IsZero() {
		at = s.StartTimestamp
	}
	if n := len(s.RunningHistories); n == 0 || s.RunningHistories[n-1].State != s.State {
		if n > 0 {
			s.RunningHistories[n-1].EndTimestamp = at
		}
		s.RunningHistories = append(s.RunningHistories, flowv1alpha1.JobRunningHistory{StartTimestamp: at, State: s.State})
	}
	if done(s.State) && s.EndTimestamp.IsZero() {
		s.EndTimestamp = at
	}
	return s
}
