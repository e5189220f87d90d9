package core

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// PodRef identifies a pod of a Job and where it belongs.
type PodRef struct {
	Pod   *corev1.Pod
	Task  string
	Index int
	// Version is the job version the pod was created for.
	Version int32
}

// ObservePods sorts a Job's pods by task and index, reading the
// annotations the controller put on them. Pods without them are not the
// Job's and are ignored.
func ObservePods(pods []*corev1.Pod) []PodRef {
	var out []PodRef
	for _, p := range pods {
		task := p.Annotations[batchv1alpha1.TaskSpecKey]
		idx, err := strconv.Atoi(p.Annotations[batchv1alpha1.TaskIndex])
		if task == "" || err != nil {
			continue
		}
		ver, _ := strconv.Atoi(p.Annotations[batchv1alpha1.JobVersion])
		out = append(out, PodRef{Pod: p, Task: task, Index: idx, Version: int32(ver)})
	}
	return out
}

// Terminating reports whether a pod is being deleted and has not ended.
func Terminating(p *corev1.Pod) bool {
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// countStatus fills the pod counts of a Job status from its pods.
func countStatus(st *batchv1alpha1.JobStatus, refs []PodRef) {
	st.Pending, st.Running, st.Succeeded, st.Failed, st.Terminating, st.Unknown = 0, 0, 0, 0, 0, 0
	st.TaskStatusCount = map[string]batchv1alpha1.TaskState{}
	for _, r := range refs {
		p := r.Pod
		phase := p.Status.Phase
		switch {
		case Terminating(p):
			st.Terminating++
		case phase == corev1.PodPending:
			st.Pending++
		case phase == corev1.PodRunning:
			st.Running++
		case phase == corev1.PodSucceeded:
			st.Succeeded++
		case phase == corev1.PodFailed:
			st.Failed++
		default:
			st.Unknown++
		}
		ts := st.TaskStatusCount[r.Task]
		if ts.Phase == nil {
			ts.Phase = map[corev1.PodPhase]int32{}
		}
		ts.Phase[phase]++
		st.TaskStatusCount[r.Task] = ts
	}
	if len(st.TaskStatusCount) == 0 {
		st.TaskStatusCount = nil
	}
}
