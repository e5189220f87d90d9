package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// JobPhase is the lifecycle phase of a Job.
// +kubebuilder:validation:Enum=Pending;Aborting;Aborted;Running;Restarting;Completing;Completed;Terminating;Terminated;Failed
type JobPhase string

// Job phases.
const (
	// JobPending: waiting in its queue for the gang to be admitted.
	JobPending JobPhase = "Pending"
	// JobAborting: aborted by a user or a policy; pods are being released.
	JobAborting JobPhase = "Aborting"
	// JobAborted: aborted; can be resumed.
	JobAborted JobPhase = "Aborted"
	// JobRunning: at least minAvailable pods are running.
	JobRunning JobPhase = "Running"
	// JobRestarting: pods are being released to be created again.
	JobRestarting JobPhase = "Restarting"
	// JobCompleting: the job has succeeded; remaining pods are being released.
	JobCompleting JobPhase = "Completing"
	// JobCompleted: the job succeeded.
	JobCompleted JobPhase = "Completed"
	// JobTerminating: ended by a policy or error; pods are being released.
	JobTerminating JobPhase = "Terminating"
	// JobTerminated: ended by a policy or error; cannot be resumed.
	JobTerminated JobPhase = "Terminated"
	// JobFailed: restarted maxRetry times without success.
	JobFailed JobPhase = "Failed"
)

// JobState is the current phase of a Job and why it was entered.
type JobState struct {
	// Phase is the current phase.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`

	// Reason is a one-word CamelCase reason for the last phase change.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Message explains the last phase change to a human.
	// +optional
	Message string `json:"message,omitempty"`

	// LastTransitionTime is when the phase last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// TaskState counts the pods of one task by pod phase.
type TaskState struct {
	// Phase maps a pod phase to the number of the task's pods in it.
	// +optional
	Phase map[corev1.PodPhase]int32 `json:"phase,omitempty"`
}

// JobCondition records that the job entered a phase.
type JobCondition struct {
	// Status is the phase the job entered.
	// +required
	Status JobPhase `json:"status"`

	// LastTransitionTime is when the job entered it.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// JobStatus is the observed state of a Job.
type JobStatus struct {
	// State is the current phase.
	// +optional
	State JobState `json:"state,omitempty"`

	// MinAvailable is the gang size the job controller currently enforces.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinAvailable int32 `json:"minAvailable,omitempty"`

	// TaskStatusCount counts each task's pods by phase, keyed by task name.
	// +optional
	TaskStatusCount map[string]TaskState `json:"taskStatusCount,omitempty"`

	// Pending is the number of pending pods.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Pending int32 `json:"pending,omitempty"`

	// Running is the number of running pods.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Running int32 `json:"running,omitempty"`

	// Succeeded is the number of pods that succeeded.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// Failed is the number of pods that failed.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// Terminating is the number of pods being deleted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Terminating int32 `json:"terminating,omitempty"`

	// Unknown is the number of pods in phase Unknown.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Unknown int32 `json:"unknown,omitempty"`

	// Version counts the job's restarts and scale changes; pods carry it in
	// the volcano.sh/job-version annotation so that stale pods are told apart.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Version int32 `json:"version,omitempty"`

	// RetryCount is how many times the job has been restarted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RetryCount int32 `json:"retryCount,omitempty"`

	// RunningDuration is how long the job ran, from Running to finished.
	// +optional
	RunningDuration *metav1.Duration `json:"runningDuration,omitempty"`

	// ControlledResources names objects the job's plugins created (for
	// example a Service or a ConfigMap), keyed by plugin-specific names.
	// +optional
	ControlledResources map[string]string `json:"controlledResources,omitempty"`

	// Conditions is the history of phases the job entered.
	// +listType=atomic
	// +optional
	Conditions []JobCondition `json:"conditions,omitempty"`

	// ObservedGeneration is the spec generation this status reflects. It is a
	// Caldera addition; Volcano clients ignore it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// MemoryScaling records, per task, the memory the job controller raised
	// after OOM kills (the RestartTaskWithMoreMemory policy action). The
	// task's pods are created with it in place of their template's. It is a
	// Caldera addition; Volcano clients ignore it.
	// +listType=map
	// +listMapKey=task
	// +optional
	MemoryScaling []TaskMemoryScaling `json:"memoryScaling,omitempty"`
}

// TaskMemoryScaling is the memory a task's containers were raised to.
type TaskMemoryScaling struct {
	// Task is the task's name.
	// +required
	Task string `json:"task"`

	// Containers are the containers raised, with their memory now.
	// +listType=map
	// +listMapKey=name
	// +optional
	Containers []ContainerMemory `json:"containers,omitempty"`

	// Steps counts the raises.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Steps int32 `json:"steps,omitempty"`

	// LastPod names the OOM-killed pod that caused the last raise, and
	// LastPodUID tells it from a later pod of the same name.
	// +optional
	LastPod string `json:"lastPod,omitempty"`
	// +optional
	LastPodUID types.UID `json:"lastPodUID,omitempty"`

	// LastTransitionTime is when the memory was last raised.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ContainerMemory is a container's memory request and limit.
type ContainerMemory struct {
	// Name is the container's name (an init container's too).
	// +required
	Name string `json:"name"`

	// Request is the memory request, when the template sets one.
	// +optional
	Request *resource.Quantity `json:"request,omitempty"`

	// Limit is the memory limit, when the template sets one.
	// +optional
	Limit *resource.Quantity `json:"limit,omitempty"`
}
