package core

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// oomReason is the reason the kubelet gives a container killed for
// exceeding its memory.
const oomReason = "OOMKilled"

// OOMKilledContainers names the containers of a pod that were OOM-killed:
// terminated for it now, or restarted in place after it.
func OOMKilledContainers(p *corev1.Pod) []string {
	var out []string
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if t := cs.State.Terminated; t != nil && t.Reason == oomReason {
				out = append(out, cs.Name)
			} else if t := cs.LastTerminationState.Terminated; t != nil && t.Reason == oomReason {
				out = append(out, cs.Name)
			}
		}
	}
	return out
}

// oomKilledAt is when a pod's first OOM kill ended its container.
func oomKilledAt(p *corev1.Pod, now time.Time) time.Time {
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range statuses {
			for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
				if t != nil && t.Reason == oomReason && !t.FinishedAt.IsZero() {
					return t.FinishedAt.Time
				}
			}
		}
	}
	return now
}

// memoryRecord is the task's entry of status.memoryScaling, or nil.
func memoryRecord(st *batchv1alpha1.JobStatus, task string) *batchv1alpha1.TaskMemoryScaling {
	for i := range st.MemoryScaling {
		if st.MemoryScaling[i].Task == task {
			return &st.MemoryScaling[i]
		}
	}
	return nil
}

// applyMemory puts the raised memory of a task's record on a pod spec.
func applyMemory(spec *corev1.PodSpec, rec *batchv1alpha1.TaskMemoryScaling) {
	if rec == nil {
		return
	}
	for _, cm := range rec.Containers {
		c := findContainer(spec, cm.Name)
		if c == nil {
			continue
		}
		if cm.Request != nil {
			if c.Resources.Requests == nil {
				c.Resources.Requests = corev1.ResourceList{}
			}
			c.Resources.Requests[corev1.ResourceMemory] = cm.Request.DeepCopy()
		}
		if cm.Limit != nil {
			if c.Resources.Limits == nil {
				c.Resources.Limits = corev1.ResourceList{}
			}
			c.Resources.Limits[corev1.ResourceMemory] = cm.Limit.DeepCopy()
		}
	}
}

// memoryStale: a pod of a task with raised memory still runs with less (it
// was created before the raise).
func memoryStale(p *corev1.Pod, rec *batchv1alpha1.TaskMemoryScaling) bool {
	if rec == nil {
		return false
	}
	for _, cm := range rec.Containers {
		c := findContainer(&p.Spec, cm.Name)
		if c == nil {
			continue
		}
		if cm.Request != nil && !sameQuantity(c.Resources.Requests, cm.Request) {
			return true
		}
		if cm.Limit != nil && !sameQuantity(c.Resources.Limits, cm.Limit) {
			return true
		}
	}
	return false
}

func sameQuantity(rl corev1.ResourceList, want *resource.Quantity) bool {
	q, ok := rl[corev1.ResourceMemory]
	return ok && q.Cmp(*want) == 0
}

func findContainer(spec *corev1.PodSpec, name string) *corev1.Container {
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == name {
			return &spec.InitContainers[i]
		}
	}
	return nil
}

// raise is the outcome of RestartTaskWithMoreMemory for one OOM kill.
type raise struct {
	// Record is the task's new status.memoryScaling entry; nil when nothing
	// was raised.
	Record *batchv1alpha1.TaskMemoryScaling
	// AtCap names why the memory cannot grow: a container already at the
	// cap, or one that asks for no memory. The job fails.
	AtCap  string
	Events []Event
}

// raiseMemory computes the memory of the OOM-killed containers of pod (of
// task ti) after one more raise: each container's memory request and limit,
// from the task's record or else its template, grow by increasePercent,
// rounded up to a whole MiB and capped at maxMemory.
func raiseMemory(job *batchv1alpha1.Job, st *batchv1alpha1.JobStatus, ti int, pod *corev1.Pod, ms *batchv1alpha1.MemoryScaling, now time.Time) raise {
	task := TaskName(job, ti)
	killed := OOMKilledContainers(pod)
	if len(killed) == 0 {
		return raise{Events: []Event{{corev1.EventTypeNormal, string(batchv1alpha1.MemoryRaisedReason),
			fmt.Sprintf("task %s: pod %s failed but no container was OOM-killed; the task restarts with the memory it had", task, pod.Name)}}}
	}
	rec := batchv1alpha1.TaskMemoryScaling{Task: task}
	if old := memoryRecord(st, task); old != nil {
		rec = *old.DeepCopy()
	}
	tmpl := job.Spec.Tasks[ti].Template.Spec.DeepCopy()
	applyMemory(tmpl, &rec)

	var changes []string
	for _, name := range killed {
		c := findContainer(tmpl, name)
		if c == nil {
			continue
		}
		req, hasReq := c.Resources.Requests[corev1.ResourceMemory]
		limit, hasLimit := c.Resources.Limits[corev1.ResourceMemory]
		if !hasReq && !hasLimit {
			return raise{AtCap: fmt.Sprintf("task %s: container %s of pod %s was OOM-killed and asks for no memory to raise", task, name, pod.Name)}
		}
		top := req
		if hasLimit {
			top = limit
		}
		if top.Cmp(ms.MaxMemory) >= 0 {
			return raise{AtCap: fmt.Sprintf("task %s: container %s of pod %s was OOM-killed at the memory cap %s", task, name, pod.Name, ms.MaxMemory.String())}
		}
		cm := batchv1alpha1.ContainerMemory{Name: name}
		var parts []string
		if hasReq {
			q := grow(req, ms.IncreasePercent, ms.MaxMemory)
			cm.Request = &q
			parts = append(parts, fmt.Sprintf("request %s → %s", req.String(), q.String()))
		}
		if hasLimit {
			q := grow(limit, ms.IncreasePercent, ms.MaxMemory)
			cm.Limit = &q
			parts = append(parts, fmt.Sprintf("limit %s → %s", limit.String(), q.String()))
		}
		if cm.Request != nil && cm.Limit != nil && cm.Request.Cmp(*cm.Limit) > 0 {
			q := cm.Limit.DeepCopy()
			cm.Request = &q
		}
		setContainerMemory(&rec, cm)
		changes = append(changes, fmt.Sprintf("container %s %s", name, strings.Join(parts, ", ")))
	}
	rec.Steps++
	rec.LastPod, rec.LastPodUID = pod.Name, pod.UID
	rec.LastTransitionTime = metav1.NewTime(now)
	msg := fmt.Sprintf("task %s: pod %s was OOM-killed; raised memory of %s (raise %d, cap %s); the task's pods restart with it",
		task, pod.Name, strings.Join(changes, "; "), rec.Steps, ms.MaxMemory.String())
	return raise{Record: &rec, Events: []Event{{corev1.EventTypeNormal, string(batchv1alpha1.MemoryRaisedReason), msg}}}
}

func setContainerMemory(rec *batchv1alpha1.TaskMemoryScaling, cm batchv1alpha1.ContainerMemory) {
	for i := range rec.Containers {
		if rec.Containers[i].Name == cm.Name {
			if cm.Request == nil {
				cm.Request = rec.Containers[i].Request
			}
			if cm.Limit == nil {
				cm.Limit = rec.Containers[i].Limit
			}
			rec.Containers[i] = cm
			return
		}
	}
	rec.Containers = append(rec.Containers, cm)
	slices.SortFunc(rec.Containers, func(a, b batchv1alpha1.ContainerMemory) int { return strings.Compare(a.Name, b.Name) })
}

// setMemoryRecord replaces or adds a task's record, keeping them sorted by
// task.
func setMemoryRecord(st *batchv1alpha1.JobStatus, rec batchv1alpha1.TaskMemoryScaling) {
	if old := memoryRecord(st, rec.Task); old != nil {
		*old = rec
		return
	}
	st.MemoryScaling = append(st.MemoryScaling, rec)
	slices.SortFunc(st.MemoryScaling, func(a, b batchv1alpha1.TaskMemoryScaling) int { return strings.Compare(a.Task, b.Task) })
}

const mebibyte = 1 << 20

// grow is q raised by percent, rounded up to a whole MiB, at most limit.
func grow(q resource.Quantity, percent int32, limit resource.Quantity) resource.Quantity {
	b := new(big.Int).Mul(big.NewInt(q.Value()), big.NewInt(int64(100+percent)))
	den := big.NewInt(100 * mebibyte)
	b.Add(b, new(big.Int).Sub(den, big.NewInt(1)))
	b.Quo(b, den)
	b.Mul(b, big.NewInt(mebibyte))
	if !b.IsInt64() || b.Cmp(big.NewInt(limit.Value())) > 0 {
		return limit.DeepCopy()
	}
	return *resource.NewQuantity(b.Int64(), resource.BinarySI)
}
