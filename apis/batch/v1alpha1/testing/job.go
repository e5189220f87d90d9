package testing

import (
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// JobWrapper builds a Job.
type JobWrapper struct{ job batchv1alpha1.Job }

// MakeJob starts a Job with a name and namespace and nothing else set.
func MakeJob(name, namespace string) *JobWrapper {
	return &JobWrapper{job: batchv1alpha1.Job{
		TypeMeta: metav1.TypeMeta{
			APIVersion: batchv1alpha1.SchemeGroupVersion.String(),
			Kind:       "Job",
		},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}}
}

// Obj returns a copy of the built Job.
func (w *JobWrapper) Obj() *batchv1alpha1.Job { return w.job.DeepCopy() }

// Annotation sets an annotation.
func (w *JobWrapper) Annotation(k, v string) *JobWrapper {
	if w.job.Annotations == nil {
		w.job.Annotations = map[string]string{}
	}
	w.job.Annotations[k] = v
	return w
}

// Queue sets spec.queue.
func (w *JobWrapper) Queue(queue string) *JobWrapper {
	w.job.Spec.Queue = queue
	return w
}

// SchedulerName sets spec.schedulerName.
func (w *JobWrapper) SchedulerName(name string) *JobWrapper {
	w.job.Spec.SchedulerName = name
	return w
}

// MinAvailable sets spec.minAvailable.
func (w *JobWrapper) MinAvailable(n int32) *JobWrapper {
	w.job.Spec.MinAvailable = n
	return w
}

// MinSuccess sets spec.minSuccess.
func (w *JobWrapper) MinSuccess(n int32) *JobWrapper {
	w.job.Spec.MinSuccess = &n
	return w
}

// MaxRetry sets spec.maxRetry.
func (w *JobWrapper) MaxRetry(n int32) *JobWrapper {
	w.job.Spec.MaxRetry = n
	return w
}

// TTLSecondsAfterFinished sets spec.ttlSecondsAfterFinished.
func (w *JobWrapper) TTLSecondsAfterFinished(seconds int32) *JobWrapper {
	w.job.Spec.TTLSecondsAfterFinished = &seconds
	return w
}

// PriorityClassName sets spec.priorityClassName.
func (w *JobWrapper) PriorityClassName(name string) *JobWrapper {
	w.job.Spec.PriorityClassName = name
	return w
}

// Plugin adds a job plugin with its arguments.
func (w *JobWrapper) Plugin(name string, args ...string) *JobWrapper {
	if w.job.Spec.Plugins == nil {
		w.job.Spec.Plugins = map[string][]string{}
	}
	if args == nil {
		args = []string{}
	}
	w.job.Spec.Plugins[name] = args
	return w
}

// Policy appends a job-level lifecycle policy.
func (w *JobWrapper) Policy(p batchv1alpha1.LifecyclePolicy) *JobWrapper {
	w.job.Spec.Policies = append(w.job.Spec.Policies, p)
	return w
}

// Volume appends a volume.
func (w *JobWrapper) Volume(v batchv1alpha1.VolumeSpec) *JobWrapper {
	w.job.Spec.Volumes = append(w.job.Spec.Volumes, v)
	return w
}

// NetworkTopology sets spec.networkTopology.
func (w *JobWrapper) NetworkTopology(nt schedulingv1beta1.NetworkTopologySpec) *JobWrapper {
	w.job.Spec.NetworkTopology = &nt
	return w
}

// Task appends a task.
func (w *JobWrapper) Task(t *TaskWrapper) *JobWrapper {
	w.job.Spec.Tasks = append(w.job.Spec.Tasks, t.Obj())
	return w
}
