package api

import (
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
)

// TaskID identifies a task: the UID of its pod.
type TaskID = types.UID

// TaskStatus is where a task stands in scheduling.
type TaskStatus int

// Task statuses. Allocated, Binding, Bound and Running hold resources on a
// node; Pipelined holds a claim on resources that are being released.
const (
	// Pending: not placed.
	Pending TaskStatus = iota
	// Allocated: placed in this cycle, not yet sent to the binder.
	Allocated
	// Pipelined: placed on resources that other tasks are releasing.
	Pipelined
	// Binding: sent to the binder, bind not yet confirmed.
	Binding
	// Bound: the pod has a node but does not run yet.
	Bound
	// Running: the pod runs.
	Running
	// Releasing: the pod is being deleted; its resources come free soon.
	Releasing
	// Succeeded and Failed: the pod has ended and holds nothing.
	Succeeded
	Failed
	// Unknown: the pod's phase is Unknown.
	Unknown

	numTaskStatuses = iota
)

func (s TaskStatus) valid() bool { return s >= 0 && s < numTaskStatuses }

var taskStatusNames = [...]string{"Pending", "Allocated", "Pipelined", "Binding", "Bound", "Running", "Releasing", "Succeeded", "Failed", "Unknown"}

func (s TaskStatus) String() string {
	if int(s) < len(taskStatusNames) {
		return taskStatusNames[s]
	}
	return "Invalid"
}

// HoldsResources reports whether a task in this status uses resources on
// its node.
func (s TaskStatus) HoldsResources() bool {
	switch s {
	case Allocated, Binding, Bound, Running, Releasing:
		return true
	}
	return false
}

// CountsForJob reports whether a task in this status counts in its job's
// (and so its queue's) allocation: it holds resources or claims room being
// freed for it, and is not leaving. Shares follow what a job will hold, so
// a queue whose pods are being evicted does not look above its share, nor
// one whose pods wait for that room below it.
func (s TaskStatus) CountsForJob() bool {
	switch s {
	case Allocated, Pipelined, Binding, Bound, Running:
		return true
	}
	return false
}

// Live reports whether a task in this status can still run.
func (s TaskStatus) Live() bool {
	switch s {
	case Failed, Unknown, Releasing:
		return false
	}
	return true
}

// Placed reports whether the task counts as placed for its gang: it has, or
// is about to have, a node.
func (s TaskStatus) Placed() bool {
	switch s {
	case Allocated, Pipelined, Binding, Bound, Running, Succeeded:
		return true
	}
	return false
}

// TaskInfo is one pod of a job.
type TaskInfo struct {
	UID       TaskID
	Job       JobID
	Name      string
	Namespace string
	// Role is the pod's task within its job (volcano.sh/task-spec), "" for
	// pods outside a Volcano Job.
	Role string
	// Resreq is the pod's effective request, as kube-scheduler and the
	// kubelet account it: the larger of its init containers and its
	// containers, plus pod overhead.
	Resreq   *Resource
	NodeName string
	Status   TaskStatus
	Priority int32
	// BestEffort: the pod requests no CPU or memory.
	BestEffort bool
	// Preemptable is the pod's volcano.sh/preemptable annotation (or
	// label): whether it may be evicted for other work; nil when the pod
	// does not say (its PodGroup may).
	Preemptable *bool
	// NoEvictUntil: an eviction of the pod was refused (a disruption
	// budget); it is not chosen as a victim again before then.
	NoEvictUntil time.Time
	// GPU is what the task asks of a node's cards (GPU sharing).
	GPU GPURequest
	// GPUIndex are the cards the task holds on its node: read from the pod's
	// volcano.sh/gpu-index once bound, chosen by the scheduler when it
	// places the task. Never changed in place: a new slice replaces it.
	GPUIndex []int
	// VGPU is what each container asks of virtual GPUs (nil when none
	// does); VGPUDevices the shares each container holds on its node, read
	// from the pod's volcano.sh/vgpu-ids-new once bound, chosen by the
	// scheduler when it places the task. Never changed in place.
	VGPU        []vgpu.Request
	VGPUDevices [][]vgpu.Device
	Pod         *corev1.Pod
	// fitMemo is what a pod-fit evaluator derived from Pod (kube-scheduler's
	// view of the pod), kept with the task and shared by its copies so that
	// it is derived once per pod object. This package does not look inside.
	fitMemo any
}

// FitMemo returns what a pod-fit evaluator kept with the task (see
// SetFitMemo); nil when nothing was kept. The evaluator checks that it was
// derived from the task's current Pod.
func (t *TaskInfo) FitMemo() any { return t.fitMemo }

// SetFitMemo keeps v with the task and the copies made of it from now on.
// Set it before the task is shared with other goroutines; they only read
// it.
func (t *TaskInfo) SetFitMemo(v any) { t.fitMemo = v }

// NewTaskInfo builds the task of a pod that belongs to job.
func NewTaskInfo(pod *corev1.Pod, job JobID) *TaskInfo {
	return newTaskInfo(pod, job, sharedRequestsOf(pod))
}

// sharedRequestsOf is requestsOf, shared with the pod whose requests were
// worked out last when the two are alike, as the pods of a gang or a
// backlog of one kind are: requests are immutable once made.
func sharedRequestsOf(pod *corev1.Pod) *Resource {
	if req, ok := lastRequests.Get(pod); ok {
		return req
	}
	req := requestsOf(pod)
	lastRequests.Put(pod, req)
	return req
}

// lastRequests are the requests sharedRequestsOf worked out last.
var lastRequests AlikeMemo[*Resource]

// NewTaskInfoAfter is NewTaskInfo for a new version of prev's pod (bound,
// started, changed in any way): when the pod's fit inputs are unchanged
// (SameFitInputs) the task shares prev's requests and carries what a
// pod-fit evaluator kept with prev (FitMemo), rather than working them out
// again for every version of every pod.
func NewTaskInfoAfter(pod *corev1.Pod, job JobID, prev *TaskInfo) *TaskInfo {
	if prev == nil || !SameFitInputs(prev.Pod, pod) {
		return NewTaskInfo(pod, job)
	}
	t := newTaskInfo(pod, job, prev.Resreq)
	t.fitMemo = prev.fitMemo
	return t
}

// requestsOf is what a pod asks of a node, its pod slot included.
func requestsOf(pod *corev1.Pod) *Resource {
	rl := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	// No node advertises a share of a card's memory by percentage: the
	// vGPU allocation sizes it on the card it picks, and the kubelet admits
	// a pod whose extended resources its node does not list.
	delete(rl, vgpu.ResourceMemoryPercentage)
	req := NewResource(rl)
	// Every pod takes one of the node's pod slots, as kube-scheduler counts.
	req.MilliPods += 1000
	return req
}

func newTaskInfo(pod *corev1.Pod, job JobID, req *Resource) *TaskInfo {
	bestEffort := req.MilliCPU == 0 && req.Memory == 0
	t := &TaskInfo{
		UID:        pod.UID,
		Job:        job,
		Name:       pod.Name,
		Namespace:  pod.Namespace,
		Role:       pod.Annotations["volcano.sh/task-spec"],
		Resreq:     req,
		NodeName:   pod.Spec.NodeName,
		Status:     StatusOfPod(pod),
		BestEffort: bestEffort,
		Pod:        pod,
	}
	if pod.Spec.Priority != nil {
		t.Priority = *pod.Spec.Priority
	}
	if t.GPU = gpuRequestOf(req); t.GPU.Any() && pod.Spec.NodeName != "" {
		// A malformed list holds no card: the pod runs where the device
		// plugin put it, unaccounted, rather than blocking the node.
		t.GPUIndex, _ = ParseGPUIndex(pod.Annotations[GPUIndexAnnotation])
	}
	if t.VGPU = vgpuRequestsOf(pod); t.VGPU != nil && pod.Spec.NodeName != "" {
		t.VGPUDevices = vgpuDevicesOf(pod, t.VGPU)
	}
	if v, ok := PreemptableOf(pod.Annotations, pod.Labels); ok {
		t.Preemptable = &v
	}
	return t
}

// PreemptableOf reads volcano.sh/preemptable from annotations, then labels.
// A value that is not a boolean reads as false: a pod whose owner meant to
// protect it is never evicted because of a typo.
func PreemptableOf(annotations, labels map[string]string) (preemptable, found bool) {
	v, ok := annotations[schedulingv1beta1.PreemptableKey]
	if !ok {
		v, ok = labels[schedulingv1beta1.PreemptableKey]
	}
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(v)
	return err == nil && b, true
}

// StatusOfPod derives the task status from a pod's phase, node and deletion.
//
// A pod that says it runs but names no node is Pending: it holds nothing on
// any node, and only placing it makes it run. That happens when a status
// write meant for an earlier pod of the same name (a gang restarted whole
// recreates its pods under their names) lands on its successor, from a node
// agent that writes status by name; counting it as running would charge
// its queue for room no node gives it, with nothing ever placing it.
func StatusOfPod(pod *corev1.Pod) TaskStatus {
	switch pod.Status.Phase {
	case corev1.PodRunning:
		if pod.DeletionTimestamp != nil {
			return Releasing
		}
		if pod.Spec.NodeName == "" {
			return Pending
		}
		return Running
	case corev1.PodPending:
		if pod.DeletionTimestamp != nil {
			return Releasing
		}
		if pod.Spec.NodeName == "" {
			return Pending
		}
		return Bound
	case corev1.PodSucceeded:
		return Succeeded
	case corev1.PodFailed:
		return Failed
	}
	return Unknown
}

// Clone returns a copy that shares the (immutable) pod and resources.
func (t *TaskInfo) Clone() *TaskInfo {
	c := *t
	return &c
}

// Copies reports whether c is a copy of t (Clone) that nothing has changed
// since: it holds the same pod, status, node, priority and devices.
func (t *TaskInfo) Copies(c *TaskInfo) bool {
	return c.UID == t.UID && c.Job == t.Job && c.Pod == t.Pod && c.Resreq == t.Resreq &&
		c.Status == t.Status && c.NodeName == t.NodeName && c.Priority == t.Priority &&
		c.Preemptable == t.Preemptable && c.NoEvictUntil.Equal(t.NoEvictUntil) &&
		c.GPU == t.GPU && slices.Equal(c.GPUIndex, t.GPUIndex) &&
		len(c.VGPUDevices) == len(t.VGPUDevices) && (len(t.VGPUDevices) == 0 || &c.VGPUDevices[0] == &t.VGPUDevices[0])
}
