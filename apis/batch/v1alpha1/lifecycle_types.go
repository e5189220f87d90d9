package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
)

// LifecyclePolicy maps an event (or a container exit code) to the action the
// job controller takes, optionally after a grace period.
//
// event and events may both be set; they are merged. Neither may be combined
// with exitCode.
//
// +kubebuilder:validation:XValidation:rule="has(self.event) || (has(self.events) && size(self.events) > 0) || has(self.exitCode)",message="a policy must set event, events or exitCode"
// +kubebuilder:validation:XValidation:rule="!has(self.exitCode) || !(has(self.event) || (has(self.events) && size(self.events) > 0))",message="a policy must not set exitCode together with event or events",fieldPath=".exitCode"
// +kubebuilder:validation:XValidation:rule="!(has(self.event) || (has(self.events) && size(self.events) > 0)) || has(self.action)",message="a policy with event or events must set action",fieldPath=".action"
// +kubebuilder:validation:XValidation:rule="has(self.memoryScaling) == (has(self.action) && self.action == 'RestartTaskWithMoreMemory')",message="memoryScaling is set exactly when action is RestartTaskWithMoreMemory",fieldPath=".memoryScaling"
type LifecyclePolicy struct {
	// Action is what the job controller does when the policy matches.
	// +kubebuilder:validation:Enum=AbortJob;RestartJob;RestartTask;RestartPod;RestartPartition;RestartTaskWithMoreMemory;TerminateJob;CompleteJob;ResumeJob
	// +optional
	Action busv1alpha1.Action `json:"action,omitempty"`

	// Event is the event the policy matches.
	// +optional
	Event Event `json:"event,omitempty"`

	// Events are further events the policy matches.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Events []Event `json:"events,omitempty"`

	// ExitCode matches pods whose container exited with this code. It must
	// not be 0.
	// +kubebuilder:validation:XValidation:rule="self != 0",message="exitCode must not be 0, which means the container succeeded"
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`

	// Timeout delays the action; if the condition clears within it (for
	// example a pending pod starts), the action is dropped. Unset acts at once.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// MemoryScaling says how the RestartTaskWithMoreMemory action raises the
	// memory of an OOM-killed container. It is required with that action and
	// refused with any other. It is a Caldera addition; Volcano clients
	// ignore it.
	// +optional
	MemoryScaling *MemoryScaling `json:"memoryScaling,omitempty"`
}

// MemoryScaling raises the memory request and limit of a container each
// time it is OOM-killed, by a percentage, up to a cap.
type MemoryScaling struct {
	// IncreasePercent is how much each OOM kill raises the container's
	// memory request and limit: 50 makes 4Gi into 6Gi. Values are rounded
	// up to a whole MiB.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=900
	// +kubebuilder:default=50
	// +optional
	IncreasePercent int32 `json:"increasePercent,omitempty"`

	// MaxMemory caps the memory limit (and request) a container can be
	// raised to. A container OOM-killed at the cap fails the job. It must be
	// at least the memory every covered container asks for.
	// +required
	MaxMemory resource.Quantity `json:"maxMemory"`
}

// Event is something that happened to a job, task or pod that a lifecycle
// policy can react to. The schema admits only the events users may name in a
// policy; the others are raised and consumed inside the job controller.
// +kubebuilder:validation:Enum=*;PodFailed;PodEvicted;PodPending;Unknown;TaskCompleted;TaskFailed;JobUpdated;OOMKilled
type Event string

// Events a policy may name.
const (
	// AnyEvent matches every event. It cannot be combined with other events
	// in the same policy list.
	AnyEvent Event = "*"
	// PodFailedEvent: a pod of the job failed.
	PodFailedEvent Event = "PodFailed"
	// PodEvictedEvent: a pod of the job was evicted or deleted.
	PodEvictedEvent Event = "PodEvicted"
	// PodPendingEvent: a pod is pending; used with a timeout.
	PodPendingEvent Event = "PodPending"
	// JobUnknownEvent: the job's pod group is Unknown, typically because some
	// pods of a running gang cannot be scheduled.
	JobUnknownEvent Event = "Unknown"
	// TaskCompletedEvent: every pod of a task (or its minSuccess) succeeded.
	TaskCompletedEvent Event = "TaskCompleted"
	// TaskFailedEvent: a task failed beyond its maxRetry.
	TaskFailedEvent Event = "TaskFailed"
	// JobUpdatedEvent: the job was scaled up or down.
	JobUpdatedEvent Event = "JobUpdated"
	// OOMKilledEvent: a container of a pod was killed for exceeding its
	// memory: the pod failed with a container terminated for OOMKilled, or a
	// container restarted in place after one. A failed pod raises PodFailed
	// as well; a policy on OOMKilled is looked at first. It is a Caldera
	// addition.
	OOMKilledEvent Event = "OOMKilled"
)

// Events raised only inside the job controller; a policy may not name them.
const (
	// PodRunningEvent: a pod started running.
	PodRunningEvent Event = "PodRunning"
	// OutOfSyncEvent: a pod or the job changed and status must be resynced.
	OutOfSyncEvent Event = "OutOfSync"
	// CommandIssuedEvent: a bus.volcano.sh Command addressed the job.
	CommandIssuedEvent Event = "CommandIssued"
)

// RestartPartitionAction restarts the partition of the failed pod (see
// TaskSpec.PartitionPolicy). It is a policy action that bus.volcano.sh does
// not define yet; it belongs next to the other actions there.
const RestartPartitionAction busv1alpha1.Action = "RestartPartition"

// RestartTaskWithMoreMemory raises the memory of the OOM-killed containers of
// a task (see LifecyclePolicy.MemoryScaling) and restarts the task's pods
// with it. It is a Caldera addition.
const RestartTaskWithMoreMemoryAction busv1alpha1.Action = "RestartTaskWithMoreMemory"

// JobEventReason is the reason of a Kubernetes Event the job controller
// records on a Job.
type JobEventReason string

// Reasons of Kubernetes Events recorded on a Job.
const (
	CommandIssuedReason   JobEventReason = "CommandIssued"
	PluginErrorReason     JobEventReason = "PluginError"
	PVCErrorReason        JobEventReason = "PVCError"
	PodGroupErrorReason   JobEventReason = "PodGroupError"
	ExecuteActionReason   JobEventReason = "ExecuteAction"
	JobStatusErrorReason  JobEventReason = "JobStatusError"
	PodGroupPendingReason JobEventReason = "PodGroupPending"
	MemoryRaisedReason    JobEventReason = "MemoryRaised"
	MemoryAtCapReason     JobEventReason = "MemoryAtCap"
)
