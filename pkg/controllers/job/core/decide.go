package core

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// Input is what a decision is made from.
type Input struct {
	// Job must be defaulted (SetDefaults_Job) by the caller.
	Job      *batchv1alpha1.Job
	Pods     []*corev1.Pod
	PodGroup *schedulingv1beta1.PodGroup
	// Commands addressed to the Job, oldest first.
	Commands []*busv1alpha1.Command
	Plugins  []JobPlugin
	// GatedByPodGroup: the Job's scheduler admits PodGroups; pods are
	// created only once the PodGroup is admitted (Inqueue), so that a
	// queue is never flooded with pods that cannot all run.
	GatedByPodGroup bool
	Now             time.Time
}

// Event is a Kubernetes Event to record on the Job.
type Event struct {
	Type, Reason, Message string
}

// Decision is what the controller does for a Job.
type Decision struct {
	// Status is the Job's new status; StatusFirst says it must be written
	// before any pod is touched (it counts a restart or enters a phase whose
	// work must survive a crash).
	Status      batchv1alpha1.JobStatus
	StatusFirst bool
	CreatePods  []*corev1.Pod
	DeletePods  []*corev1.Pod
	// PodGroup is the PodGroup wanted; nil when the Job wants none (it has
	// finished), in which case an existing one is deleted.
	PodGroup       *schedulingv1beta1.PodGroup
	Objects        []Desired
	DeleteCommands []*busv1alpha1.Command
	// DeleteJob: the Job has finished and outlived its TTL.
	DeleteJob    bool
	RequeueAfter time.Duration
	Events       []Event
}

// trigger is an observed event with what it concerns.
type trigger struct {
	event    batchv1alpha1.Event
	task     string
	pod      *corev1.Pod
	exitCode int32
	since    time.Time
}

// Decide computes what to do for a Job.
func Decide(in Input) Decision {
	job := in.Job
	refs := ObservePods(in.Pods)
	d := Decision{Status: *job.Status.DeepCopy()}
	st := &d.Status
	countStatus(st, refs)
	st.MinAvailable = job.Spec.MinAvailable
	phase := st.State.Phase
	if phase == "" {
		phase = batchv1alpha1.JobPending
	}

	action, act, policy := busv1alpha1.Action(""), trigger{}, batchv1alpha1.LifecyclePolicy{}
	for _, cmd := range in.Commands {
		d.DeleteCommands = append(d.DeleteCommands, cmd)
		if action == "" {
			action = busv1alpha1.Action(cmd.Action)
			d.Events = append(d.Events, Event{corev1.EventTypeNormal, "CommandIssued", fmt.Sprintf("command %s: %s", cmd.Name, cmd.Action)})
		}
	}
	if action == "" && (phase == batchv1alpha1.JobPending || phase == batchv1alpha1.JobRunning) {
		action, act, policy, d.RequeueAfter = policyAction(in, refs)
		if action != "" {
			d.Events = append(d.Events, Event{corev1.EventTypeNormal, "PolicyTriggered",
				fmt.Sprintf("%s on %s", action, describe(act))})
		}
	}

	setPhase := func(p batchv1alpha1.JobPhase, reason string) {
		if p == phase && st.State.Phase == p {
			return
		}
		st.State = batchv1alpha1.JobState{Phase: p, Reason: reason, LastTransitionTime: metav1.NewTime(in.Now)}
		now := metav1.NewTime(in.Now)
		st.Conditions = append(st.Conditions, batchv1alpha1.JobCondition{Status: p, LastTransitionTime: &now})
		phase = p
	}
	if st.State.Phase == "" {
		setPhase(batchv1alpha1.JobPending, "Created")
	}
	restart := func(reason string) {
		st.RetryCount++
		st.Version++
		setPhase(batchv1alpha1.JobRestarting, reason)
		d.StatusFirst = true
	}

	switch phase {
	case batchv1alpha1.JobPending, batchv1alpha1.JobRunning:
		switch action {
		case busv1alpha1.RestartJobAction:
			restart(describe(act))
		case busv1alpha1.AbortJobAction:
			setPhase(batchv1alpha1.JobAborting, describe(act))
			d.StatusFirst = true
		case busv1alpha1.TerminateJobAction:
			setPhase(batchv1alpha1.JobTerminating, describe(act))
			d.StatusFirst = true
		case busv1alpha1.CompleteJobAction:
			setPhase(batchv1alpha1.JobCompleting, describe(act))
			d.StatusFirst = true
		case busv1alpha1.RestartTaskAction:
			for _, r := range refs {
				if r.Task == act.task && r.Pod.DeletionTimestamp == nil {
					d.DeletePods = append(d.DeletePods, r.Pod)
				}
			}
		case busv1alpha1.RestartPodAction:
			if act.pod != nil && act.pod.DeletionTimestamp == nil {
				d.DeletePods = append(d.DeletePods, act.pod)
			}
		case batchv1alpha1.RestartPartitionAction:
			d.DeletePods = append(d.DeletePods, partitionPods(refs, act)...)
		case batchv1alpha1.RestartTaskWithMoreMemoryAction:
			ti := TaskIndex(job, act.task)
			if act.pod == nil || ti < 0 || policy.MemoryScaling == nil {
				break
			}
			r := raiseMemory(job, st, ti, act.pod, policy.MemoryScaling, in.Now)
			d.Events = append(d.Events, r.Events...)
			if r.AtCap != "" {
				d.Events = append(d.Events, Event{corev1.EventTypeWarning, string(batchv1alpha1.MemoryAtCapReason), r.AtCap})
				setPhase(batchv1alpha1.JobFailed, r.AtCap)
				d.StatusFirst = true
				break
			}
			if r.Record != nil {
				setMemoryRecord(st, *r.Record)
				d.StatusFirst = true
			}
			for _, ref := range refs {
				if ref.Task == act.task && ref.Pod.DeletionTimestamp == nil && ref.Pod.Status.Phase != corev1.PodSucceeded {
					d.DeletePods = append(d.DeletePods, ref.Pod)
				}
			}
		}
	case batchv1alpha1.JobAborted:
		if action == busv1alpha1.ResumeJobAction {
			restart("resumed")
		}
	case batchv1alpha1.JobAborting:
		if action == busv1alpha1.ResumeJobAction {
			restart("resumed")
		}
	}

	switch phase {
	case batchv1alpha1.JobPending, batchv1alpha1.JobRunning:
		// Pods are built from the status decided here (memory raised by a
		// policy just now included).
		now := *job
		now.Status = d.Status
		in.Job = &now
		sync(in, refs, &d)
		alive := st.Running + st.Succeeded + st.Failed
		total := job.Spec.TotalReplicas()
		switch {
		case phase == batchv1alpha1.JobPending && job.Spec.MinAvailable <= alive && alive > 0:
			setPhase(batchv1alpha1.JobRunning, "")
		case phase == batchv1alpha1.JobRunning && total > 0 && !restartingPods(refs, d.DeletePods):
			if p, reason, done := finished(job, st, total); done {
				setPhase(p, reason)
			}
		}
	case batchv1alpha1.JobRestarting:
		d.DeletePods = append(d.DeletePods, liveOrAll(refs, false)...)
		switch {
		case st.RetryCount >= job.Spec.MaxRetry:
			setPhase(batchv1alpha1.JobFailed, fmt.Sprintf("restarted %d times, maxRetry is %d", st.RetryCount, job.Spec.MaxRetry))
		case len(refs) == 0:
			setPhase(batchv1alpha1.JobPending, "restarted")
		}
	case batchv1alpha1.JobAborting, batchv1alpha1.JobCompleting, batchv1alpha1.JobTerminating:
		d.DeletePods = append(d.DeletePods, liveOrAll(refs, true)...)
		if st.Pending == 0 && st.Running == 0 && st.Terminating == 0 && st.Unknown == 0 {
			next := map[batchv1alpha1.JobPhase]batchv1alpha1.JobPhase{
				batchv1alpha1.JobAborting:    batchv1alpha1.JobAborted,
				batchv1alpha1.JobCompleting:  batchv1alpha1.JobCompleted,
				batchv1alpha1.JobTerminating: batchv1alpha1.JobTerminated,
			}[phase]
			setPhase(next, "")
		}
	}

	switch phase {
	case batchv1alpha1.JobCompleted, batchv1alpha1.JobFailed, batchv1alpha1.JobTerminated:
		d.DeletePods = append(d.DeletePods, liveOrAll(refs, true)...)
		d.PodGroup = nil
		d.DeleteJob, d.RequeueAfter = ttl(job, st, in.Now, d.RequeueAfter)
	case batchv1alpha1.JobAborted:
		// Resumable: pods are gone, the PodGroup too; no TTL.
		d.DeletePods = append(d.DeletePods, liveOrAll(refs, true)...)
		d.PodGroup = nil
	default:
		withStatus := *job
		withStatus.Status.MemoryScaling = st.MemoryScaling
		d.PodGroup = BuildPodGroup(&withStatus)
		d.Objects = append(Claims(job), pluginObjects(job, in.Plugins)...)
	}
	d.DeletePods = unique(d.DeletePods)
	return d
}

func describe(t trigger) string {
	switch {
	case t.event == batchv1alpha1.OOMKilledEvent && t.pod != nil:
		return fmt.Sprintf("pod %s OOM-killed", t.pod.Name)
	case t.pod != nil && t.exitCode != 0:
		return fmt.Sprintf("pod %s exited with code %d", t.pod.Name, t.exitCode)
	case t.pod != nil:
		return fmt.Sprintf("%s of pod %s", t.event, t.pod.Name)
	case t.task != "":
		return fmt.Sprintf("%s of task %s", t.event, t.task)
	case t.event != "":
		return string(t.event)
	}
	return "command"
}

func pluginObjects(job *batchv1alpha1.Job, plugins []JobPlugin) []Desired {
	var out []Desired
	for _, p := range plugins {
		out = append(out, p.Objects(job)...)
	}
	return out
}

// finished says whether a Running job is done and how: minSuccess pods
// succeeded, or every pod ended and enough (per job and per task) succeeded.
func finished(job *batchv1alpha1.Job, st *batchv1alpha1.JobStatus, total int32) (batchv1alpha1.JobPhase, string, bool) {
	if ms := job.Spec.MinSuccess; ms != nil && st.Succeeded >= *ms {
		return batchv1alpha1.JobCompleted, fmt.Sprintf("%d pods succeeded, minSuccess is %d", st.Succeeded, *ms), true
	}
	if st.Succeeded+st.Failed != total {
		return "", "", false
	}
	for i, ts := range job.Spec.Tasks {
		if ts.MinAvailable == nil {
			continue
		}
		if ok := st.TaskStatusCount[TaskName(job, i)].Phase[corev1.PodSucceeded]; ok < *ts.MinAvailable {
			return batchv1alpha1.JobFailed, fmt.Sprintf("task %s: %d pods succeeded, fewer than its minAvailable %d", TaskName(job, i), ok, *ts.MinAvailable), true
		}
	}
	if ms := job.Spec.MinSuccess; ms != nil {
		return batchv1alpha1.JobFailed, fmt.Sprintf("every pod ended and %d succeeded, fewer than minSuccess %d", st.Succeeded, *ms), true
	}
	if st.Succeeded >= job.Spec.MinAvailable {
		return batchv1alpha1.JobCompleted, fmt.Sprintf("%d of %d pods succeeded", st.Succeeded, total), true
	}
	return batchv1alpha1.JobFailed, fmt.Sprintf("every pod ended and %d succeeded, fewer than minAvailable %d", st.Succeeded, job.Spec.MinAvailable), true
}

// restartingPods: a failed pod is being deleted (by a restart decided now
// or before), so it has not ended for good; the job is not finished while
// it goes.
func restartingPods(refs []PodRef, deleting []*corev1.Pod) bool {
	for _, p := range deleting {
		if p.Status.Phase == corev1.PodFailed {
			return true
		}
	}
	for _, r := range refs {
		if r.Pod.DeletionTimestamp != nil && r.Pod.Status.Phase == corev1.PodFailed {
			return true
		}
	}
	return false
}

// liveOrAll returns the pods to delete: when keepEnded, those that have
// not ended (succeeded and failed pods are kept for their logs); otherwise
// every pod. Pods already being deleted are left alone.
func liveOrAll(refs []PodRef, keepEnded bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, r := range refs {
		p := r.Pod
		if p.DeletionTimestamp != nil {
			continue
		}
		if keepEnded && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func unique(pods []*corev1.Pod) []*corev1.Pod {
	seen := map[string]bool{}
	out := pods[:0]
	for _, p := range pods {
		if !seen[p.Name] {
			seen[p.Name] = true
			out = append(out, p)
		}
	}
	return out
}

// ttl says whether a finished Job has outlived ttlSecondsAfterFinished, or
// when to look again.
func ttl(job *batchv1alpha1.Job, st *batchv1alpha1.JobStatus, now time.Time, requeue time.Duration) (bool, time.Duration) {
	if job.Spec.TTLSecondsAfterFinished == nil {
		return false, requeue
	}
	finishedAt := st.State.LastTransitionTime.Time
	if finishedAt.IsZero() {
		finishedAt = now
	}
	left := finishedAt.Add(time.Duration(*job.Spec.TTLSecondsAfterFinished) * time.Second).Sub(now)
	if left <= 0 {
		return true, requeue
	}
	return false, minPositive(requeue, left)
}

func minPositive(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

// sync makes the pods match the spec: missing pods of admitted jobs are
// created (tasks that depend on others once those are ready), pods of an
// older version or beyond a task's replicas are deleted.
func sync(in Input, refs []PodRef, d *Decision) {
	job := in.Job
	version := d.Status.Version
	existing := map[string]PodRef{}
	for _, r := range refs {
		existing[r.Pod.Name] = r
		if r.Version < version && r.Pod.DeletionTimestamp == nil {
			d.DeletePods = append(d.DeletePods, r.Pod)
		}
	}
	for _, r := range refs {
		if r.Pod.DeletionTimestamp == nil && r.Pod.Status.Phase != corev1.PodSucceeded && memoryStale(r.Pod, memoryRecord(&d.Status, r.Task)) {
			d.DeletePods = append(d.DeletePods, r.Pod)
		}
	}
	wanted := map[string]bool{}
	for ti, ts := range job.Spec.Tasks {
		for idx := range int(ts.Replicas) {
			wanted[PodName(job.Name, TaskName(job, ti), idx)] = true
		}
	}
	for _, r := range refs {
		if !wanted[r.Pod.Name] && r.Pod.DeletionTimestamp == nil {
			d.DeletePods = append(d.DeletePods, r.Pod)
		}
	}
	if in.GatedByPodGroup && !admitted(in.PodGroup) {
		return
	}
	for ti, ts := range job.Spec.Tasks {
		if !dependenciesReady(job, ts.DependsOn, refs) {
			continue
		}
		for idx := range int(ts.Replicas) {
			name := PodName(job.Name, TaskName(job, ti), idx)
			if _, ok := existing[name]; ok {
				continue
			}
			d.CreatePods = append(d.CreatePods, BuildPod(job, ti, idx, in.Plugins))
		}
	}
}

// admitted: the scheduler has let the PodGroup past Pending. A PodGroup
// the scheduler marked Completed (every pod it knew of finished) stays
// admitted, so that a pod evicted meanwhile is made again rather than the
// job waiting for it forever.
func admitted(pg *schedulingv1beta1.PodGroup) bool {
	return pg != nil && pg.Status.Phase != "" && pg.Status.Phase != schedulingv1beta1.PodGroupPending
}

// dependenciesReady: the tasks a task depends on are ready — any of them
// (iteration "any") or all (the default) — where a task is ready when at
// least its minAvailable pods run or have succeeded.
func dependenciesReady(job *batchv1alpha1.Job, dep *batchv1alpha1.DependsOn, refs []PodRef) bool {
	if dep == nil || len(dep.Name) == 0 {
		return true
	}
	ready := func(task string) bool {
		var need int32
		for i, ts := range job.Spec.Tasks {
			if TaskName(job, i) == task {
				need = ts.Replicas
				if ts.MinAvailable != nil {
					need = *ts.MinAvailable
				}
			}
		}
		var n int32
		for _, r := range refs {
			if r.Task == task && (r.Pod.Status.Phase == corev1.PodRunning || r.Pod.Status.Phase == corev1.PodSucceeded) {
				n++
			}
		}
		return n >= need
	}
	any := dep.Iteration == batchv1alpha1.IterationAny
	for _, name := range dep.Name {
		r := ready(name)
		if any && r {
			return true
		}
		if !any && !r {
			return false
		}
	}
	return !any
}

// policyAction finds the first observed event a policy acts on, task
// policies before job policies, and returns its action. Events held back
// by a policy timeout ask to be looked at again when it expires.
func policyAction(in Input, refs []PodRef) (busv1alpha1.Action, trigger, batchv1alpha1.LifecyclePolicy, time.Duration) {
	var requeue time.Duration
	for _, t := range triggers(in, refs) {
		p, ok := matchPolicy(in.Job, t)
		if !ok {
			continue
		}
		if p.Timeout != nil {
			if left := t.since.Add(p.Timeout.Duration).Sub(in.Now); left > 0 {
				requeue = minPositive(requeue, left)
				continue
			}
		}
		if p.Action != "" {
			return busv1alpha1.Action(p.Action), t, p, requeue
		}
	}
	return "", trigger{}, batchv1alpha1.LifecyclePolicy{}, requeue
}

// partitionPods are the live pods of the triggering pod's partition (its
// task's pods with the same partition id), or of its whole task when the
// task is not partitioned.
func partitionPods(refs []PodRef, act trigger) []*corev1.Pod {
	var out []*corev1.Pod
	for _, r := range refs {
		samePart := act.pod == nil || r.Pod.Labels[batchv1alpha1.TaskPartitionID] == act.pod.Labels[batchv1alpha1.TaskPartitionID]
		if r.Task == act.task && r.Pod.DeletionTimestamp == nil && samePart {
			out = append(out, r.Pod)
		}
	}
	return out
}

// triggers lists the events observed on the current version's pods and the
// Job's tasks, in a fixed order.
func triggers(in Input, refs []PodRef) []trigger {
	job := in.Job
	var out []trigger
	sorted := slices.Clone(refs)
	slices.SortFunc(sorted, func(a, b PodRef) int {
		if a.Task != b.Task {
			if a.Task < b.Task {
				return -1
			}
			return 1
		}
		return a.Index - b.Index
	})
	for _, r := range sorted {
		if r.Version < job.Status.Version {
			continue
		}
		p := r.Pod
		if rec := memoryRecord(&job.Status, r.Task); rec != nil && rec.LastPodUID != "" && rec.LastPodUID == p.UID {
			// Its OOM kill was acted on; it is on its way out.
			continue
		}
		if p.DeletionTimestamp == nil && len(OOMKilledContainers(p)) > 0 {
			out = append(out, trigger{event: batchv1alpha1.OOMKilledEvent, task: r.Task, pod: p, exitCode: exitCode(p), since: oomKilledAt(p, in.Now)})
		}
		switch {
		case evicted(p):
			out = append(out, trigger{event: batchv1alpha1.PodEvictedEvent, task: r.Task, pod: p, since: deletionTime(p, in.Now)})
		case p.Status.Phase == corev1.PodFailed:
			out = append(out, trigger{event: batchv1alpha1.PodFailedEvent, task: r.Task, pod: p, exitCode: exitCode(p), since: finishedAt(p, in.Now)})
		case p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil:
			out = append(out, trigger{event: batchv1alpha1.PodPendingEvent, task: r.Task, pod: p, since: p.CreationTimestamp.Time})
		}
	}
	for i, ts := range job.Spec.Tasks {
		task := TaskName(job, i)
		var succeeded, failed int32
		for _, r := range refs {
			if r.Task != task || r.Version < job.Status.Version {
				continue
			}
			switch r.Pod.Status.Phase {
			case corev1.PodSucceeded:
				succeeded++
			case corev1.PodFailed:
				failed++
			}
		}
		need := ts.Replicas
		if ts.MinAvailable != nil {
			need = *ts.MinAvailable
		}
		switch {
		case ts.Replicas > 0 && succeeded == ts.Replicas:
			out = append(out, trigger{event: batchv1alpha1.TaskCompletedEvent, task: task, since: in.Now})
		case failed > 0 && ts.Replicas-failed < need:
			out = append(out, trigger{event: batchv1alpha1.TaskFailedEvent, task: task, since: in.Now})
		}
	}
	if jobUnknown(in, refs) {
		out = append(out, trigger{event: batchv1alpha1.JobUnknownEvent, since: in.Now})
	}
	return out
}

// jobUnknown: the scheduler reports the running gang broken (PodGroup
// Unknown) and the Job's own pods agree: it runs, with fewer of the current
// version's pods running or succeeded than minAvailable. A report from
// before a restart, not yet rewritten, is thus not taken for a new one.
func jobUnknown(in Input, refs []PodRef) bool {
	if in.PodGroup == nil || in.PodGroup.Status.Phase != schedulingv1beta1.PodGroupUnknown ||
		in.Job.Status.State.Phase != batchv1alpha1.JobRunning {
		return false
	}
	var alive int32
	for _, r := range refs {
		if r.Version < in.Job.Status.Version || r.Pod.DeletionTimestamp != nil {
			continue
		}
		if p := r.Pod.Status.Phase; p == corev1.PodRunning || p == corev1.PodSucceeded {
			alive++
		}
	}
	return alive < in.Job.Spec.MinAvailable
}

// evicted: the pod was evicted (by the kubelet, the Eviction API, a
// preemption or a taint), as opposed to deleted by this controller.
func evicted(p *corev1.Pod) bool {
	if p.Status.Reason == "Evicted" {
		return true
	}
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func deletionTime(p *corev1.Pod, now time.Time) time.Time {
	if p.DeletionTimestamp != nil {
		return p.DeletionTimestamp.Time
	}
	return now
}

// exitCode is the first non-zero exit code of the pod's containers.
func exitCode(p *corev1.Pod) int32 {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return t.ExitCode
		}
	}
	return 0
}

func finishedAt(p *corev1.Pod, now time.Time) time.Time {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && !t.FinishedAt.IsZero() {
			return t.FinishedAt.Time
		}
	}
	return now
}

// wildcard reports whether "*" matches an event: every event but the
// normal conditions PodPending and TaskCompleted, which a policy has to
// name to act on.
func wildcard(e batchv1alpha1.Event) bool {
	return e != batchv1alpha1.PodPendingEvent && e != batchv1alpha1.TaskCompletedEvent
}

// matchPolicy finds the policy for a trigger: the task's policies first,
// then the job's; within each, exit-code policies match a failed pod's
// exit code, event policies its event (or "*").
func matchPolicy(job *batchv1alpha1.Job, t trigger) (batchv1alpha1.LifecyclePolicy, bool) {
	var lists [][]batchv1alpha1.LifecyclePolicy
	if t.task != "" {
		for i, ts := range job.Spec.Tasks {
			if TaskName(job, i) == t.task {
				lists = append(lists, ts.Policies)
			}
		}
	}
	lists = append(lists, job.Spec.Policies)
	for _, policies := range lists {
		for _, p := range policies {
			if p.ExitCode != nil {
				if t.exitCode != 0 && *p.ExitCode == t.exitCode {
					return p, true
				}
				continue
			}
			anyMatches := wildcard(t.event) && (p.Event == batchv1alpha1.AnyEvent || slices.Contains(p.Events, batchv1alpha1.AnyEvent))
			if anyMatches || p.Event == t.event || slices.Contains(p.Events, t.event) {
				return p, true
			}
		}
	}
	return batchv1alpha1.LifecyclePolicy{}, false
}
