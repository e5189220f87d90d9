package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/caldera-sh/caldera/pkg/agent/cgroup"
	"github.com/caldera-sh/caldera/pkg/agent/oversub"
	"github.com/caldera-sh/caldera/pkg/agent/qos"
)

type metav1ListOptions = metav1.ListOptions

var everything = labels.Everything()

// patchBatch sets the node's batch resources in status capacity and
// allocatable; zero amounts remove them.
func (a *Agent) patchBatch(ctx context.Context, node string, amounts oversub.Amounts) error {
	cpu, mem := batchQuantities(amounts)
	values := map[corev1.ResourceName]any{qos.BatchCPU: cpu.String(), qos.BatchMemory: mem.String()}
	if amounts.CPU == 0 {
		values[qos.BatchCPU] = nil
	}
	if amounts.Memory == 0 {
		values[qos.BatchMemory] = nil
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"capacity": values, "allocatable": values}})
	if err != nil {
		return err
	}
	if _, err := a.client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("patching the status of node %s: %w", node, err)
	}
	return nil
}

// setTaint adds or removes the evicting taint.
func (a *Agent) setTaint(ctx context.Context, name string, on bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := a.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var taints []corev1.Taint
		for _, t := range node.Spec.Taints {
			if t.Key != EvictingTaint {
				taints = append(taints, t)
			}
		}
		if on {
			taints = append(taints, corev1.Taint{Key: EvictingTaint, Effect: corev1.TaintEffectNoSchedule})
		}
		if len(taints) == len(node.Spec.Taints) && hasTaint(node) == on {
			return nil
		}
		node.Spec.Taints = taints
		_, err = a.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
}

// evict asks the API server to evict the pod, honouring disruption
// budgets.
func (a *Agent) evict(ctx context.Context, pod *corev1.Pod) error {
	err := a.client.CoreV1().Pods(pod.Namespace).EvictV1(ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// cpuReading is a cgroup's CPU time at a moment.
type cpuReading struct {
	at    time.Time
	usage int64
}

// cpuMeter turns cumulative CPU times into rates in milli-CPUs.
type cpuMeter struct {
	root cpuReading
	pods map[types.UID]cpuReading
}

// rate is the milli-CPUs used between two readings.
func rate(prev, cur cpuReading) float64 {
	dt := cur.at.Sub(prev.at).Microseconds()
	if dt <= 0 || cur.usage < prev.usage {
		return 0
	}
	return 1000 * float64(cur.usage-prev.usage) / float64(dt)
}

// node reads the root cgroup's CPU rate and the time it covers since the
// reading before; ok is false on the first reading or an error.
func (m *cpuMeter) node(now time.Time, root string) (rateMilli float64, span time.Duration, ok bool) {
	u, err := cgroup.CPUUsage(root)
	if err != nil {
		return 0, 0, false
	}
	cur := cpuReading{at: now, usage: u}
	prev := m.root
	m.root = cur
	if prev.at.IsZero() {
		return 0, 0, false
	}
	return rate(prev, cur), cur.at.Sub(prev.at), true
}

// pod reads a pod cgroup's CPU rate.
func (m *cpuMeter) pod(now time.Time, uid types.UID, dir string) (float64, bool) {
	u, err := cgroup.CPUUsage(dir)
	if err != nil {
		delete(m.pods, uid)
		return 0, false
	}
	cur := cpuReading{at: now, usage: u}
	prev, ok := m.pods[uid]
	m.pods[uid] = cur
	if !ok {
		return 0, false
	}
	return rate(prev, cur), true
}

// forget drops the readings of pods no longer on the node.
func (m *cpuMeter) forget(seen map[types.UID]bool) {
	for uid := range m.pods {
		if !seen[uid] {
			delete(m.pods, uid)
		}
	}
}

// usageSmoothers smooth the node's and online pods' usage.
type usageSmoothers struct {
	nodeCPU, nodeMem, onlineCPU, onlineMem oversub.Smoother
}

// smoothing is how far a smoothed usage falls toward a lower reading per
// reading.
const smoothing = 0.3

func newUsageSmoothers() usageSmoothers {
	return usageSmoothers{
		nodeCPU: oversub.Smoother{Alpha: smoothing}, nodeMem: oversub.Smoother{Alpha: smoothing},
		onlineCPU: oversub.Smoother{Alpha: smoothing}, onlineMem: oversub.Smoother{Alpha: smoothing},
	}
}
