package core

import (
	"fmt"
	"strconv"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// PodGroupName is the name of a Job's PodGroup: "<job>-<job uid>".
func PodGroupName(job *batchv1alpha1.Job) string {
	return job.Name + "-" + string(job.UID)
}

// PodName is the name of a task's pod: "<job>-<task>-<index>".
func PodName(job, task string, index int) string {
	return fmt.Sprintf("%s-%s-%d", job, task, index)
}

// TaskName returns a task's name, defaulted as the webhook would.
func TaskName(job *batchv1alpha1.Job, i int) string {
	if n := job.Spec.Tasks[i].Name; n != "" {
		return n
	}
	return batchv1alpha1.DefaultTaskSpec + strconv.Itoa(i)
}

// TaskIndex is the index of the named task in the Job's spec, or -1.
func TaskIndex(job *batchv1alpha1.Job, task string) int {
	for i := range job.Spec.Tasks {
		if TaskName(job, i) == task {
			return i
		}
	}
	return -1
}
