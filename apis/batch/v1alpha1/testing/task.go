package testing

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// TaskWrapper builds a TaskSpec.
type TaskWrapper struct{ task batchv1alpha1.TaskSpec }

// MakeTask starts a task with a name, a replica count and a pod template of
// one busybox container named "main".
func MakeTask(name string, replicas int32) *TaskWrapper {
	return &TaskWrapper{task: batchv1alpha1.TaskSpec{
		Name:     name,
		Replicas: replicas,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
			RestartPolicy: corev1.RestartPolicyNever,
		}},
	}}
}

// Obj returns a copy of the built TaskSpec.
func (w *TaskWrapper) Obj() batchv1alpha1.TaskSpec { return *w.task.DeepCopy() }

// MinAvailable sets minAvailable.
func (w *TaskWrapper) MinAvailable(n int32) *TaskWrapper {
	w.task.MinAvailable = &n
	return w
}

// MaxRetry sets maxRetry.
func (w *TaskWrapper) MaxRetry(n int32) *TaskWrapper {
	w.task.MaxRetry = n
	return w
}

// Policy appends a task-level lifecycle policy.
func (w *TaskWrapper) Policy(p batchv1alpha1.LifecyclePolicy) *TaskWrapper {
	w.task.Policies = append(w.task.Policies, p)
	return w
}

// DependsOn sets dependsOn.
func (w *TaskWrapper) DependsOn(iteration batchv1alpha1.Iteration, names ...string) *TaskWrapper {
	w.task.DependsOn = &batchv1alpha1.DependsOn{Name: names, Iteration: iteration}
	return w
}

// Partition sets partitionPolicy.
func (w *TaskWrapper) Partition(total, size, minPartitions int32) *TaskWrapper {
	w.task.PartitionPolicy = &batchv1alpha1.PartitionPolicySpec{
		TotalPartitions: total,
		PartitionSize:   size,
		MinPartitions:   minPartitions,
	}
	return w
}

// TopologyPolicy sets topologyPolicy.
func (w *TaskWrapper) TopologyPolicy(p batchv1alpha1.NumaPolicy) *TaskWrapper {
	w.task.TopologyPolicy = p
	return w
}

// HostNetwork puts the task's pods on the host network.
func (w *TaskWrapper) HostNetwork() *TaskWrapper {
	w.task.Template.Spec.HostNetwork = true
	return w
}

// CPURequest sets the CPU request of every container, e.g. "2" or "500m".
func (w *TaskWrapper) CPURequest(quantity string) *TaskWrapper {
	for i := range w.task.Template.Spec.Containers {
		c := &w.task.Template.Spec.Containers[i]
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(quantity)
	}
	return w
}

// NoContainers empties the pod template's containers.
func (w *TaskWrapper) NoContainers() *TaskWrapper {
	w.task.Template.Spec.Containers = nil
	return w
}

// ContainerName renames the template's first container.
func (w *TaskWrapper) ContainerName(name string) *TaskWrapper {
	w.task.Template.Spec.Containers[0].Name = name
	return w
}

// Memory sets the memory request and limit of every container; an empty
// string leaves that one unset.
func (w *TaskWrapper) Memory(request, limit string) *TaskWrapper {
	for i := range w.task.Template.Spec.Containers {
		c := &w.task.Template.Spec.Containers[i]
		if request != "" {
			if c.Resources.Requests == nil {
				c.Resources.Requests = corev1.ResourceList{}
			}
			c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(request)
		}
		if limit != "" {
			if c.Resources.Limits == nil {
				c.Resources.Limits = corev1.ResourceList{}
			}
			c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse(limit)
		}
	}
	return w
}
