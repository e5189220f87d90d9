package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// Job runs one or more groups of identical pods ("tasks") as a single gang:
// the scheduler admits it only when spec.minAvailable pods can run together,
// and lifecycle policies turn pod and task events into job-wide actions.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=jobs,shortName={vcjob,vj},scope=Namespaced
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.state.phase`
// +kubebuilder:printcolumn:name="minAvailable",type=integer,JSONPath=`.status.minAvailable`
// +kubebuilder:printcolumn:name="RUNNINGS",type=integer,JSONPath=`.status.running`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="QUEUE",type=string,priority=1,JSONPath=`.spec.queue`
type Job struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired job: its tasks, gang size and policies. The
	// rules on tasks and queue are the Job's own: templates that embed a
	// JobSpec (CronJob, HyperJob) may change both.
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.tasks) || !has(self.tasks) || size(self.tasks) == size(oldSelf.tasks)",message="tasks cannot be added or removed after the job is created",fieldPath=".tasks"
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.queue) || !has(self.queue) || self.queue == oldSelf.queue",message="the queue cannot be changed after the job is created",fieldPath=".queue"
	// +required
	Spec JobSpec `json:"spec"`

	// Status is the observed state of the job, written by the job controller.
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// JobList is a list of Jobs.
//
// +kubebuilder:object:root=true
type JobList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Job `json:"items"`
}

// JobSpec is the desired state of a Job.
//
// The list maxima (tasks 128, policies 32, volumes 64) bound the cost of the
// CEL rules below; they are far above what real jobs use.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minAvailable) || !has(self.tasks) || self.minAvailable <= self.tasks.map(t, has(t.replicas) ? t.replicas : 0).sum()",message="must not be greater than the sum of the replicas of all tasks",fieldPath=".minAvailable"
// +kubebuilder:validation:XValidation:rule="!has(self.tasks) || self.tasks.all(t, !has(t.name) || self.tasks.exists_one(u, has(u.name) && u.name == t.name))",message="task names must be unique within the job",fieldPath=".tasks"
type JobSpec struct {
	// SchedulerName is the scheduler that places the job's pods; it is also
	// the default for tasks[*].template.spec.schedulerName.
	// +kubebuilder:default=volcano
	// +kubebuilder:validation:MaxLength=63
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// MinAvailable is the gang size: the number of pods that must be able to
	// run at the same time before any of them is started. Unset or 0 means
	// the sum of the tasks' minAvailable.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinAvailable int32 `json:"minAvailable,omitempty"`

	// Volumes are persistent volume claims mounted into every container of
	// every task.
	// +listType=map
	// +listMapKey=mountPath
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Volumes []VolumeSpec `json:"volumes,omitempty"`

	// Tasks are the groups of identical pods the job runs.
	//
	// Tasks are an atomic list rather than a map keyed by name because
	// Volcano lets the name be omitted (it is defaulted to "default<index>"),
	// and a list-map key must be required or statically defaulted.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=128
	// +required
	Tasks []TaskSpec `json:"tasks,omitempty"`

	// Policies are the lifecycle policies of every task that has no policy
	// for the same event or exit code of its own.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Policies []LifecyclePolicy `json:"policies,omitempty"`

	// Plugins are job plugins (for example env, svc, ssh, mpi, tensorflow,
	// pytorch) keyed by name, each with its command-line style arguments.
	// +optional
	Plugins map[string][]string `json:"plugins,omitempty"`

	// RunningEstimate is the user's estimate of how long the job runs once
	// started, used by schedulers that plan backfill or reservations.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	// +optional
	RunningEstimate *metav1.Duration `json:"runningEstimate,omitempty"`

	// Queue is the scheduling queue the job is submitted to. It cannot be
	// changed after creation.
	// +kubebuilder:default="default"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	Queue string `json:"queue,omitempty"`

	// MaxRetry is how many times the job is restarted before it is marked
	// Failed. 0 is replaced by the default, 3.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRetry int32 `json:"maxRetry,omitempty"`

	// TTLSecondsAfterFinished is how long a finished job (Completed, Failed
	// or Terminated) is kept before it is deleted. Unset keeps it; 0 deletes
	// it as soon as it finishes.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// PriorityClassName is the PriorityClass of the job's pod group and the
	// default for its pods.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// MinSuccess is the number of succeeded pods after which the job counts
	// as Completed. Unset: the job completes when all its pods succeeded, or
	// when a policy completes it.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinSuccess *int32 `json:"minSuccess,omitempty"`

	// NetworkTopology constrains how far apart, in HyperNode tiers, the pods
	// of the job may be placed.
	// +optional
	NetworkTopology *schedulingv1beta1.NetworkTopologySpec `json:"networkTopology,omitempty"`
}

// VolumeSpec mounts a persistent volume claim into the job's containers.
//
// +kubebuilder:validation:XValidation:rule="(has(self.volumeClaimName) && size(self.volumeClaimName) > 0) || has(self.volumeClaim)",message="a volume must set volumeClaimName or volumeClaim"
type VolumeSpec struct {
	// MountPath is where the volume is mounted in each container. It must not
	// contain ':'.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:Pattern=`^[^:]+$`
	// +required
	MountPath string `json:"mountPath"`

	// VolumeClaimName is an existing claim to mount. When volumeClaim is set
	// instead, the job controller creates the claim and records its name here.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	VolumeClaimName string `json:"volumeClaimName,omitempty"`

	// VolumeClaim is the spec of a claim the job controller creates for the
	// job.
	// +optional
	VolumeClaim *corev1.PersistentVolumeClaimSpec `json:"volumeClaim,omitempty"`
}

// NumaPolicy is the NUMA topology policy a task's pods need on their node.
// +kubebuilder:validation:Enum=none;best-effort;restricted;single-numa-node
type NumaPolicy string

// NUMA topology policies.
const (
	NumaPolicyNone           NumaPolicy = "none"
	NumaPolicyBestEffort     NumaPolicy = "best-effort"
	NumaPolicyRestricted     NumaPolicy = "restricted"
	NumaPolicySingleNumaNode NumaPolicy = "single-numa-node"
)

// TaskSpec is one group of identical pods in a Job.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minAvailable) || self.minAvailable <= (has(self.replicas) ? self.replicas : 0)",message="task minAvailable must not be greater than task replicas",fieldPath=".minAvailable"
// +kubebuilder:validation:XValidation:rule="!has(self.partitionPolicy) || self.partitionPolicy.totalPartitions * self.partitionPolicy.partitionSize == (has(self.replicas) ? self.replicas : 0)",message="partitionPolicy.totalPartitions * partitionPolicy.partitionSize must equal task replicas",fieldPath=".partitionPolicy"
type TaskSpec struct {
	// Name identifies the task within the job and is part of its pod names
	// (<job>-<task>-<index>). Unset means "default<index of the task>".
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Name string `json:"name,omitempty"`

	// Replicas is the number of pods of this task.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// MinAvailable is how many pods of this task must run for the task to
	// count as running. Unset means replicas.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinAvailable *int32 `json:"minAvailable,omitempty"`

	// Template is the pod template of the task's pods.
	// +required
	Template corev1.PodTemplateSpec `json:"template"`

	// Policies are the lifecycle policies of this task. They take precedence
	// over spec.policies for the same event or exit code.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Policies []LifecyclePolicy `json:"policies,omitempty"`

	// TopologyPolicy is the NUMA policy the task's pods need. A policy other
	// than none requires whole-CPU requests in every container.
	// +optional
	TopologyPolicy NumaPolicy `json:"topologyPolicy,omitempty"`

	// MaxRetry is how many times a pod of this task may be restarted before
	// the task counts as failed. 0 is replaced by the default, 3.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRetry int32 `json:"maxRetry,omitempty"`

	// DependsOn holds back this task's pods until the named tasks run.
	// +optional
	DependsOn *DependsOn `json:"dependsOn,omitempty"`

	// PartitionPolicy splits the task's pods into equal partitions that are
	// each placed within a network topology domain and restarted as a unit.
	// +optional
	PartitionPolicy *PartitionPolicySpec `json:"partitionPolicy,omitempty"`
}

// PartitionPolicySpec divides a task's pods into totalPartitions groups of
// partitionSize pods; pod i belongs to partition i / partitionSize.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minPartitions) || self.minPartitions <= self.totalPartitions",message="partitionPolicy.minPartitions must not be greater than partitionPolicy.totalPartitions",fieldPath=".minPartitions"
type PartitionPolicySpec struct {
	// TotalPartitions is the number of partitions. totalPartitions *
	// partitionSize must equal the task's replicas.
	// +kubebuilder:validation:Minimum=1
	// +required
	TotalPartitions int32 `json:"totalPartitions"`

	// PartitionSize is the number of pods in each partition.
	// +kubebuilder:validation:Minimum=1
	// +required
	PartitionSize int32 `json:"partitionSize"`

	// NetworkTopology bounds the tier each partition may span.
	// +optional
	NetworkTopology *schedulingv1beta1.NetworkTopologySpec `json:"networkTopology,omitempty"`

	// MinPartitions is how many partitions must be placeable for the task to
	// be admitted.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinPartitions int32 `json:"minPartitions,omitempty"`
}

// Iteration says whether a dependent task waits for any or all of the tasks
// it depends on.
// +kubebuilder:validation:Enum=any;all
type Iteration string

// Iterations of DependsOn.
const (
	// IterationAny starts the task when one of the named tasks runs.
	IterationAny Iteration = "any"
	// IterationAll starts the task when all of the named tasks run.
	IterationAll Iteration = "all"
)

// DependsOn names the tasks a task waits for.
type DependsOn struct {
	// Name lists the tasks of the same job that this task waits for.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	// +optional
	Name []string `json:"name,omitempty"`

	// Iteration is any (one of the named tasks is enough) or all.
	// +optional
	Iteration Iteration `json:"iteration,omitempty"`
}

// TotalReplicas is the number of pods the job's tasks ask for.
func (s *JobSpec) TotalReplicas() int32 {
	var n int32
	for _, t := range s.Tasks {
		n += t.Replicas
	}
	return n
}
