package split

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/federation/resources"
)

// FromHyperJob reduces a defaulted HyperJob to the split's input. A
// replicated job without a split policy, or a static one without
// accelerators, is used as written. Otherwise its scaling task is the task
// whose pods request the most of the accelerator in all: its pod count is
// what the split sets; the other tasks are the fixed part of every child.
func FromHyperJob(hj *trainingv1alpha1.HyperJob) (*Input, error) {
	in := &Input{Name: hj.Name}
	if hj.Spec.MaxDomains != nil {
		in.MaxDomains = *hj.Spec.MaxDomains
	}
	for i := range hj.Spec.ReplicatedJobs {
		rj := &hj.Spec.ReplicatedJobs[i]
		out := ReplicatedJob{Name: rj.Name, Mode: AsWritten, Replicas: max(rj.Replicas, 1), Fixed: resources.Amounts{}, Pod: resources.Amounts{}, MinPods: 1}
		if len(rj.ClusterNames) > 0 {
			out.Clusters = rj.ClusterNames
		}
		sp := rj.SplitPolicy
		if sp != nil && sp.AcceleratorType != nil {
			out.Accelerator = corev1.ResourceName(*sp.AcceleratorType)
		}
		switch {
		case sp == nil || sp.AcceleratorType == nil:
		case sp.Mode == trainingv1alpha1.SplitModeAuto:
			out.Mode = Auto
		case sp.Accelerators != nil:
			out.Mode = Static
		}
		scaling := -1
		if out.Mode != AsWritten {
			scaling = ScalingTask(&rj.TemplateSpec, out.Accelerator)
			if scaling < 0 {
				return nil, fmt.Errorf("spec.replicatedJobs[%d].splitPolicy.acceleratorType: no task of the template requests %s", i, out.Accelerator)
			}
		}
		for t := range rj.TemplateSpec.Tasks {
			task := &rj.TemplateSpec.Tasks[t]
			for k, v := range task.Template.Spec.NodeSelector {
				if out.Selector == nil {
					out.Selector = map[string]string{}
				}
				// The scaling task's selector says where the
				// accelerators are.
				if _, set := out.Selector[k]; !set || t == scaling {
					out.Selector[k] = v
				}
			}
			pod := podRequest(&task.Template.Spec)
			if t == scaling {
				out.Pod = pod
				out.PodAccelerators = pod[out.Accelerator] / 1000
				continue
			}
			out.Fixed.AddTimes(pod, int64(task.Replicas))
		}
		if out.Mode != AsWritten {
			if out.Pod[out.Accelerator]%1000 != 0 || out.PodAccelerators == 0 {
				return nil, fmt.Errorf("spec.replicatedJobs[%d].templateSpec.tasks[%d]: a pod requests %dm %s; the split needs whole accelerators", i, scaling, out.Pod[out.Accelerator], out.Accelerator)
			}
			if sp.Accelerators != nil {
				out.Accelerators = int64(*sp.Accelerators)
			} else {
				// Auto without a total: what the template asks, times its
				// replicas.
				out.Accelerators = int64(out.Replicas) * (out.Fixed[out.Accelerator]/1000 + int64(rj.TemplateSpec.Tasks[scaling].Replicas)*out.PodAccelerators)
			}
		}
		in.ReplicatedJobs = append(in.ReplicatedJobs, out)
	}
	return in, nil
}

// ScalingTask is the index of the template's task whose pods request the
// most of the accelerator in all, or -1 when none does.
func ScalingTask(spec *batchv1alpha1.JobSpec, accelerator corev1.ResourceName) int {
	best, bestTotal := -1, int64(0)
	for t := range spec.Tasks {
		task := &spec.Tasks[t]
		total := podRequest(&task.Template.Spec)[accelerator] * int64(task.Replicas)
		if total > bestTotal {
			best, bestTotal = t, total
		}
	}
	return best
}

// ChildSpec is the spec of a child job: the template, with its scaling
// task given the child's pods when the split sized it. The gang sizes
// follow: a task minAvailable equal to its replicas stays equal to them,
// a smaller one is kept (at most the pods); a job minAvailable that is the
// sum of the tasks' stays that sum, another is kept (at most the pods).
func ChildSpec(rj *trainingv1alpha1.ReplicatedJob, c *Child) batchv1alpha1.JobSpec {
	spec := *rj.TemplateSpec.DeepCopy()
	if c.Pods == 0 || rj.SplitPolicy == nil || rj.SplitPolicy.AcceleratorType == nil {
		return spec
	}
	scaling := ScalingTask(&rj.TemplateSpec, corev1.ResourceName(*rj.SplitPolicy.AcceleratorType))
	if scaling < 0 {
		return spec
	}
	taskMins := func() (sum int32) {
		for _, t := range spec.Tasks {
			if t.MinAvailable != nil {
				sum += *t.MinAvailable
			} else {
				sum += t.Replicas
			}
		}
		return sum
	}
	defaulted := spec.MinAvailable == taskMins()
	task := &spec.Tasks[scaling]
	before := task.Replicas
	task.Replicas = c.Pods
	if task.MinAvailable != nil {
		m := *task.MinAvailable
		if m == before {
			m = c.Pods
		}
		task.MinAvailable = new(min(m, c.Pods))
	}
	if defaulted {
		spec.MinAvailable = taskMins()
	} else {
		var total int32
		for _, t := range spec.Tasks {
			total += t.Replicas
		}
		spec.MinAvailable = min(spec.MinAvailable, total)
	}
	return spec
}

// podRequest is one pod's request, as the scheduler counts it.
func podRequest(spec *corev1.PodSpec) resources.Amounts {
	return resources.Of(resourcehelper.PodRequests(&corev1.Pod{Spec: *spec}, resourcehelper.PodResourcesOptions{}))
}
