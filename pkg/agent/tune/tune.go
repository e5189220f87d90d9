// Package tune works out the cgroup v2 settings of a node's pods from
// their QoS classes and the node's colocation configuration. It decides
// only; the agent writes the settings and reports the failures.
//
//   - Offline pods are held to what they asked for of the oversubscribed
//     resources, which the kubelet does not know: cpu.max from their
//     kubernetes.io/batch-cpu limit, memory.max from their
//     kubernetes.io/batch-memory limit, per container and for the pod.
//   - With CPU QoS, every pod's cgroup gets its class's cpu.weight, and
//     offline pods cpu.idle, so that they run only on CPU time nobody else
//     wants.
//   - With memory QoS, offline pods get memory.high below memory.max, so
//     that the kernel reclaims their memory before online pods feel it.
//   - With CPU burst, pods annotated volcano.sh/enable-quota-burst: "true"
//     may run above their quota for a while (cpu.max.burst).
package tune

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/caldera-sh/caldera/pkg/agent/cgroup"
	"github.com/caldera-sh/caldera/pkg/agent/config"
	"github.com/caldera-sh/caldera/pkg/agent/qos"
)

// Pod annotations for CPU burst, Volcano's.
const (
	// BurstAnnotation "true" asks for CPU burst.
	BurstAnnotation = "volcano.sh/enable-quota-burst"
	// BurstTimeAnnotation is the burst in microseconds per period; the
	// default is the quota itself, and it is never more.
	BurstTimeAnnotation = "volcano.sh/quota-burst-time"
)

// Period is the CFS period the agent's quotas are written for, in
// microseconds: the kernel's default.
const Period = 100000

// Setting is one interface file of one cgroup.
type Setting struct {
	Dir, File, Value string
}

// Pod returns the settings of a pod of the class on a node configured so.
// Containers without an ID yet get none (their cgroups do not exist).
func Pod(l cgroup.Layout, pod *corev1.Pod, class qos.Class, cfg config.Node) []Setting {
	podDir := l.Pod(qos.KubeQOS(pod), pod.UID)
	var out []Setting
	add := func(dir, file, value string) {
		if dir != "" {
			out = append(out, Setting{Dir: dir, File: file, Value: value})
		}
	}
	ids := containerIDs(pod)

	if cfg.CPUQoS {
		if w, ok := cfg.Weights[class]; ok {
			add(podDir, "cpu.weight", strconv.FormatInt(w, 10))
		}
		if class.Offline() {
			add(podDir, "cpu.idle", "1")
		}
	}

	// Quotas: offline pods' from their batch limits; everyone's cpu limit
	// matters for burst.
	var podQuota int64
	podLimited := true
	var podMem int64
	podMemLimited := true
	burst := cfg.CPUBurst && pod.Annotations[BurstAnnotation] == "true"
	for _, c := range pod.Spec.Containers {
		dir := l.Container(podDir, ids[c.Name])
		quota := cpuQuota(c, class)
		if quota > 0 {
			podQuota += quota
		} else {
			podLimited = false
		}
		if class.Offline() {
			if quota > 0 {
				add(dir, "cpu.max", fmt.Sprintf("%d %d", quota, Period))
			} else {
				add(dir, "cpu.max", fmt.Sprintf("max %d", Period))
			}
			if m := batchMemory(c); m > 0 {
				podMem += m
				add(dir, "memory.max", strconv.FormatInt(m, 10))
				if cfg.MemoryQoS {
					add(dir, "memory.high", strconv.FormatInt(int64(float64(m)*cfg.HighRatio), 10))
				}
			} else {
				podMemLimited = false
			}
		}
		if burst && quota > 0 {
			add(dir, "cpu.max.burst", strconv.FormatInt(burstOf(pod, quota), 10))
		}
	}
	if class.Offline() {
		if podLimited && podQuota > 0 {
			add(podDir, "cpu.max", fmt.Sprintf("%d %d", podQuota, Period))
		} else {
			add(podDir, "cpu.max", fmt.Sprintf("max %d", Period))
		}
		if podMemLimited && podMem > 0 {
			add(podDir, "memory.max", strconv.FormatInt(podMem, 10))
			if cfg.MemoryQoS {
				add(podDir, "memory.high", strconv.FormatInt(int64(float64(podMem)*cfg.HighRatio), 10))
			}
		}
	}
	if burst && podLimited && podQuota > 0 {
		add(podDir, "cpu.max.burst", strconv.FormatInt(burstOf(pod, podQuota), 10))
	}
	return out
}

// cpuQuota is a container's CPU quota per period in microseconds: from
// its batch-cpu limit (milli-CPUs) for an offline pod, its cpu limit for
// an online one; 0 when unlimited.
func cpuQuota(c corev1.Container, class qos.Class) int64 {
	if class.Offline() {
		if q, ok := c.Resources.Limits[qos.BatchCPU]; ok {
			// batch-cpu counts milli-CPUs as a plain number.
			return q.Value() * Period / 1000
		}
		return 0
	}
	if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok && !q.IsZero() {
		return q.MilliValue() * Period / 1000
	}
	return 0
}

// batchMemory is a container's batch-memory limit in bytes, 0 without.
func batchMemory(c corev1.Container) int64 {
	if q, ok := c.Resources.Limits[qos.BatchMemory]; ok {
		return q.Value()
	}
	return 0
}

// burstOf is the burst the pod asks for on a quota: its annotation's,
// else the quota, and never more than the quota.
func burstOf(pod *corev1.Pod, quota int64) int64 {
	if v, err := strconv.ParseInt(pod.Annotations[BurstTimeAnnotation], 10, 64); err == nil && v >= 0 {
		return min(v, quota)
	}
	return quota
}

// containerIDs maps container names to their runtime IDs.
func containerIDs(pod *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, s := range pod.Status.ContainerStatuses {
		out[s.Name] = s.ContainerID
	}
	return out
}
