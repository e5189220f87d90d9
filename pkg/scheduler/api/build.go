package api

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metricsv1alpha1 "github.com/caldera-sh/caldera/apis/metrics/v1alpha1"
	nodeinfov1alpha1 "github.com/caldera-sh/caldera/apis/nodeinfo/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/caldera-sh/caldera/apis/topology/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/devices/vgpu"
	"github.com/caldera-sh/caldera/pkg/loadaware"
	"github.com/caldera-sh/caldera/pkg/topology"
	"github.com/caldera-sh/caldera/pkg/topology/numa"
)

// ShadowPodGroupPrefix names the job of a pod that names no PodGroup:
// "podgroup-<pod uid>", the name the PodGroup controller gives the PodGroup
// it creates for such a pod, so the job keeps its identity when it appears.
const ShadowPodGroupPrefix = "podgroup-"

// JobIDOfPod returns the job a pod belongs to: the PodGroup named by its
// scheduling.k8s.io/group-name annotation, or its own shadow job.
func JobIDOfPod(pod *corev1.Pod) JobID {
	if name := pod.Annotations[schedulingv1beta1.KubeGroupNameAnnotation]; name != "" {
		return NewJobID(pod.Namespace, name)
	}
	return NewJobID(pod.Namespace, ShadowPodGroupPrefix+string(pod.UID))
}

// Standalone reports whether a pod forms a job of its own: it names no
// PodGroup and no controller owns it. Pods of a workload (a ReplicaSet, a
// StatefulSet, a batch Job, ...) wait for the PodGroup the PodGroup
// controller makes for the workload, so that its gang is never placed one
// pod at a time.
func Standalone(pod *corev1.Pod) bool {
	return pod.Annotations[schedulingv1beta1.KubeGroupNameAnnotation] == "" && metav1.GetControllerOf(pod) == nil
}

// NewShadowJob returns the one-pod job of a pod without a PodGroup. Its
// queue comes from the pod's scheduling.volcano.sh/queue-name annotation.
func NewShadowJob(pod *corev1.Pod) *JobInfo {
	j := NewJobInfo(JobIDOfPod(pod))
	// The name is the ID's: "<namespace>/<name>".
	j.Name = string(j.UID)[len(pod.Namespace)+1:]
	j.Namespace = pod.Namespace
	j.Queue = QueueID(pod.Annotations[schedulingv1beta1.QueueNameAnnotation])
	if j.Queue == "" {
		j.Queue = schedulingv1beta1.DefaultQueue
	}
	j.Shadow = true
	j.MinAvailable = 1
	j.CreationTimestamp = pod.CreationTimestamp
	if pod.Spec.Priority != nil {
		j.Priority = *pod.Spec.Priority
	}
	return j
}

// Objects are the API objects a snapshot is built from.
type Objects struct {
	Nodes     []*corev1.Node
	Pods      []*corev1.Pod
	PodGroups []*schedulingv1beta1.PodGroup
	Queues    []*schedulingv1beta1.Queue
	// HyperNodes make up the network topology.
	HyperNodes []*topologyv1alpha1.HyperNode
	// Numatopologies are the nodes' reports of their CPUs; one that does
	// not read is left out, as if the node reported nothing.
	Numatopologies []*nodeinfov1alpha1.Numatopology
	// NodeUsages are the nodes' measured use; one that does not read is
	// left out, as if the node measured nothing.
	NodeUsages []*metricsv1alpha1.NodeUsage
	// PriorityOf resolves a PriorityClass name to its value; nil means 0.
	PriorityOf func(className string) int32
	// NeverPreempts reports whether a PriorityClass has preemptionPolicy
	// Never; nil means none has.
	NeverPreempts func(className string) bool
	// NewNodeMirror, when set, gives each node a mirror (see NodeMirror).
	NewNodeMirror func() NodeMirror
	// MIGGeometries are the MIG geometries of card models the vGPU device
	// plugin is configured with (vgpu.ParseDeviceConfig); nil: the shipped
	// ones.
	MIGGeometries []vgpu.Geometry
}

// SetPriorityFromTasks sets the priority and preemption policy of a job
// whose PodGroup names no PriorityClass: the highest priority among its
// pods, and Never when one of its pods may not preempt.
func SetPriorityFromTasks(j *JobInfo) {
	var p int32
	first := true
	never := false
	for _, t := range j.Tasks {
		if first || t.Priority > p {
			p, first = t.Priority, false
		}
		if pp := t.Pod.Spec.PreemptionPolicy; pp != nil && *pp == corev1.PreemptNever {
			never = true
		}
	}
	j.Priority = p
	j.PreemptNever = never
}

// Build assembles a snapshot from whole objects. Pods are taken as they are
// (a pending pod nominated for a node claims room there, pipelined); a pod
// of a PodGroup that does not exist is ignored, as it cannot be scheduled
// until its group appears.
func Build(o Objects) *Snapshot {
	nodes := map[string]*NodeInfo{}
	for _, n := range o.Nodes {
		ni := NewNodeInfo(n)
		if o.MIGGeometries != nil {
			ni.SetMIGGeometries(o.MIGGeometries)
		}
		if o.NewNodeMirror != nil {
			ni.SetMirror(o.NewNodeMirror())
		}
		nodes[n.Name] = ni
	}
	jobs := map[JobID]*JobInfo{}
	for _, pg := range o.PodGroups {
		j := NewJobInfo(NewJobID(pg.Namespace, pg.Name))
		j.SetPodGroup(pg)
		jobs[j.UID] = j
	}
	for _, pod := range o.Pods {
		id := JobIDOfPod(pod)
		j := jobs[id]
		if j == nil {
			if !Standalone(pod) {
				continue
			}
			j = NewShadowJob(pod)
			jobs[id] = j
		}
		t := NewTaskInfo(pod, id)
		if nominated := pod.Status.NominatedNodeName; t.Status == Pending && nodes[nominated] != nil {
			// A pod nominated for a node claims room there, as in the
			// scheduler's cache.
			t.Status = Pipelined
			t.NodeName = nominated
		}
		j.AddTask(t)
		if n := nodes[t.NodeName]; n != nil && t.NodeName != "" {
			// Separate copies, as in the cache's snapshots.
			n.AddTask(t.Clone())
		}
	}
	for _, j := range jobs {
		if class := j.classOf(); class != "" {
			if o.PriorityOf != nil {
				j.Priority = o.PriorityOf(class)
			}
			j.PreemptNever = o.NeverPreempts != nil && o.NeverPreempts(class)
			continue
		}
		if !j.Shadow || len(j.Tasks) > 0 {
			SetPriorityFromTasks(j)
		}
	}
	var queues []*QueueInfo
	for _, q := range o.Queues {
		queues = append(queues, NewQueueInfo(q))
	}
	nodeList := make([]*NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		nodeList = append(nodeList, n)
	}
	jobList := make([]*JobInfo, 0, len(jobs))
	for _, j := range jobs {
		jobList = append(jobList, j)
	}
	snap := NewSnapshot(nodeList, jobList, queues)
	snap.Topology = topology.Build(o.HyperNodes, o.Nodes)
	for _, nt := range o.Numatopologies {
		if r, err := numa.FromNumatopology(nt); err == nil {
			if snap.NUMA == nil {
				snap.NUMA = map[string]*numa.Report{}
			}
			snap.NUMA[nt.Name] = r
		}
	}
	for _, nu := range o.NodeUsages {
		if u, err := loadaware.FromNodeUsage(nu); err == nil {
			if snap.Usage == nil {
				snap.Usage = map[string]*loadaware.Usage{}
			}
			snap.Usage[nu.Name] = u
		}
	}
	return snap
}
