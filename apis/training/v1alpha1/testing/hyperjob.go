// Package testing builds training.volcano.sh objects for tests:
//
//	hj := trainingtesting.MakeHyperJob("llm", "ns").MinAvailable(2).
//		ReplicatedJob(trainingtesting.MakeReplicatedJob("trainer", 2).Clusters("a", "b")).Obj()
package testing

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
)

// HyperJobWrapper builds a HyperJob.
type HyperJobWrapper struct{ hj trainingv1alpha1.HyperJob }

// MakeHyperJob starts a HyperJob with a name and namespace and no replicated
// jobs.
func MakeHyperJob(name, namespace string) *HyperJobWrapper {
	return &HyperJobWrapper{hj: trainingv1alpha1.HyperJob{
		TypeMeta: metav1.TypeMeta{
			APIVersion: trainingv1alpha1.SchemeGroupVersion.String(),
			Kind:       "HyperJob",
		},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}}
}

// Obj returns a copy of the built HyperJob.
func (w *HyperJobWrapper) Obj() *trainingv1alpha1.HyperJob { return w.hj.DeepCopy() }

// GenerateName replaces the name by a generateName prefix.
func (w *HyperJobWrapper) GenerateName(prefix string) *HyperJobWrapper {
	w.hj.Name = ""
	w.hj.GenerateName = prefix
	return w
}

// MinAvailable sets spec.minAvailable.
func (w *HyperJobWrapper) MinAvailable(n int32) *HyperJobWrapper {
	w.hj.Spec.MinAvailable = &n
	return w
}

// MaxDomains sets spec.maxDomains.
func (w *HyperJobWrapper) MaxDomains(n int32) *HyperJobWrapper {
	w.hj.Spec.MaxDomains = &n
	return w
}

// Plugin adds a HyperJob plugin with its arguments.
func (w *HyperJobWrapper) Plugin(name string, args ...string) *HyperJobWrapper {
	if w.hj.Spec.Plugins == nil {
		w.hj.Spec.Plugins = map[string][]string{}
	}
	w.hj.Spec.Plugins[name] = args
	return w
}

// ReplicatedJob appends a replicated job.
func (w *HyperJobWrapper) ReplicatedJob(rj *ReplicatedJobWrapper) *HyperJobWrapper {
	w.hj.Spec.ReplicatedJobs = append(w.hj.Spec.ReplicatedJobs, rj.Obj())
	return w
}
