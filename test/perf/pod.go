package perf

import (
	corev1 "k8s.io/api/core/v1"

	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// pauseImage is the benchmark pods' image; kwok only pretends to run it.
const pauseImage = "registry.k8s.io/pause:3.10"

// benchPod starts a pod of the benchmark: one container with the requests,
// for the scheduler, labelled with the job it belongs to.
func benchPod(namespace, name, schedulerName, job string, requests corev1.ResourceList) *st.PodWrapper {
	p := st.MakePod(namespace, name).SchedulerName(schedulerName).Image(pauseImage).Label(jobLabel, job)
	p.Spec.Containers[0].Resources.Requests = requests.DeepCopy()
	return p
}
