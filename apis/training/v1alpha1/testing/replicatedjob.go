package testing

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	batchtesting "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
)

// ReplicatedJobWrapper builds a ReplicatedJob.
type ReplicatedJobWrapper struct {
	rj trainingv1alpha1.ReplicatedJob
}

// MakeReplicatedJob starts a replicated job with a name, a replica count and
// a template of one task "worker" with one busybox pod.
func MakeReplicatedJob(name string, replicas int32) *ReplicatedJobWrapper {
	template := batchtesting.MakeJob("", "").Task(batchtesting.MakeTask("worker", 1)).Obj().Spec
	return &ReplicatedJobWrapper{rj: trainingv1alpha1.ReplicatedJob{
		Name:         name,
		Replicas:     replicas,
		TemplateSpec: template,
	}}
}

// Obj returns a copy of the built ReplicatedJob.
func (w *ReplicatedJobWrapper) Obj() trainingv1alpha1.ReplicatedJob { return *w.rj.DeepCopy() }

// Template replaces the job template.
func (w *ReplicatedJobWrapper) Template(spec batchv1alpha1.JobSpec) *ReplicatedJobWrapper {
	w.rj.TemplateSpec = spec
	return w
}

// Clusters sets the clusters the child jobs may go to.
func (w *ReplicatedJobWrapper) Clusters(names ...string) *ReplicatedJobWrapper {
	w.rj.ClusterNames = names
	return w
}

// Split sets a split policy. An empty accelerator type leaves it unset, and
// accelerators 0 leaves the count unset.
func (w *ReplicatedJobWrapper) Split(mode trainingv1alpha1.SplitMode, accelerators int32, acceleratorType string) *ReplicatedJobWrapper {
	sp := &trainingv1alpha1.SplitPolicy{Mode: mode}
	if accelerators != 0 {
		sp.Accelerators = &accelerators
	}
	if acceleratorType != "" {
		sp.AcceleratorType = &acceleratorType
	}
	w.rj.SplitPolicy = sp
	return w
}

// Request sets a resource request and limit, e.g. ("nvidia.com/gpu", "1"), on
// every container of every task of the template.
func (w *ReplicatedJobWrapper) Request(name corev1.ResourceName, quantity string) *ReplicatedJobWrapper {
	q := resource.MustParse(quantity)
	for i := range w.rj.TemplateSpec.Tasks {
		containers := w.rj.TemplateSpec.Tasks[i].Template.Spec.Containers
		for j := range containers {
			r := &containers[j].Resources
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			if r.Limits == nil {
				r.Limits = corev1.ResourceList{}
			}
			r.Requests[name] = q
			r.Limits[name] = q
		}
	}
	return w
}
