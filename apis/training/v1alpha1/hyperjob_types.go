package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// HyperJob is one training job made of several Volcano Jobs ("child jobs")
// that may run in different member clusters. Each replicated job is a Volcano
// Job template stamped out replicas times; child job i of replicated job r is
// named <hyperjob>-<r>-<i> and placed in exactly one cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=hyperjobs,shortName={hyperjob,hj},scope=Namespaced
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="SplitCount",type=integer,JSONPath=`.status.splitCount`
// +kubebuilder:printcolumn:name="Completed",type=string,JSONPath=`.status.conditions[?(@.type=="Completed")].status`
// +kubebuilder:printcolumn:name="Failed",type=string,JSONPath=`.status.conditions[?(@.type=="Failed")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type HyperJob struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the child jobs the HyperJob runs and how they are placed.
	// +required
	Spec HyperJobSpec `json:"spec"`

	// Status is aggregated from the child jobs by the HyperJob controller.
	// +optional
	Status HyperJobStatus `json:"status,omitempty"`
}

// HyperJobSpec is the desired state of a HyperJob.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minAvailable) || self.minAvailable <= self.replicatedJobs.map(r, has(r.replicas) ? r.replicas : 1).sum()",message="minAvailable must not be greater than the number of child jobs, the sum of replicatedJobs[*].replicas",fieldPath=.minAvailable
type HyperJobSpec struct {
	// ReplicatedJobs are the job templates of the HyperJob, each stamped out
	// replicas times. Names are unique. At most 16: one template per kind of
	// accelerator or group of clusters is the common case, and the API server
	// prices every CEL rule of the embedded Job template once per possible
	// item; the Job's task-name uniqueness rule, quadratic in its 128 tasks,
	// exceeds the per-rule budget above about 18 items.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	ReplicatedJobs []ReplicatedJob `json:"replicatedJobs"`

	// MinAvailable is the number of child jobs that must be running for the
	// HyperJob to count as running. Unset means all of them.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinAvailable *int32 `json:"minAvailable,omitempty"`

	// MaxDomains is the largest number of clusters the HyperJob may be split
	// across. Unset means no limit.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxDomains *int32 `json:"maxDomains,omitempty"`

	// Plugins are HyperJob plugins keyed by name, each with its arguments,
	// for framework-specific work across clusters.
	// +optional
	Plugins map[string][]string `json:"plugins,omitempty"`

	// FailurePolicy says what happens when a child job fails. Unset: the
	// other children run on, and the HyperJob fails once all have finished.
	// +optional
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`
}

// FailureAction is what a failed child job brings about.
// +kubebuilder:validation:Enum=RestartChild;RestartAll;Fail
type FailureAction string

// Failure actions.
const (
	// RestartChild makes the failed child again, in its cluster.
	RestartChild FailureAction = "RestartChild"
	// RestartAll deletes every child and plans the HyperJob again.
	RestartAll FailureAction = "RestartAll"
	// Fail deletes the children still running: the HyperJob has failed.
	Fail FailureAction = "Fail"
)

// FailurePolicy is what to do when a child job fails.
type FailurePolicy struct {
	// Action is RestartChild, RestartAll or Fail.
	// +required
	Action FailureAction `json:"action"`
	// MaxRetry is how many restarts the HyperJob may have; the next failure
	// fails it. Unset means 3.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxRetry *int32 `json:"maxRetry,omitempty"`
}

// DefaultHyperJobMaxRetry is the restarts a failure policy allows when it
// sets none.
const DefaultHyperJobMaxRetry = 3

// ReplicatedJob is a Volcano Job template and how many child jobs to make
// from it.
//
// +kubebuilder:validation:XValidation:rule="!has(self.splitPolicy) || !has(self.splitPolicy.accelerators) || !has(self.splitPolicy.mode) || self.splitPolicy.mode != 'static' || self.splitPolicy.accelerators >= (has(self.replicas) ? self.replicas : 1)",message="splitPolicy.accelerators must be at least replicas in static mode: every child job gets an equal share of at least one accelerator",fieldPath=.splitPolicy.accelerators
type ReplicatedJob struct {
	// Name identifies the replicated job within the HyperJob and is part of
	// its child jobs' names, <hyperjob>-<name>-<index>, so it is a DNS-1123
	// label.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// TemplateSpec is the spec of every child job made from this template.
	// +required
	TemplateSpec batchv1alpha1.JobSpec `json:"templateSpec"`

	// SplitPolicy says how the accelerators of this replicated job are
	// split into child jobs. Unset means the template is used as written.
	// +optional
	SplitPolicy *SplitPolicy `json:"splitPolicy,omitempty"`

	// Replicas is the number of child jobs made from the template.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	Replicas int32 `json:"replicas,omitempty"`

	// ClusterNames are the member clusters the child jobs may be placed in;
	// each child job goes to one of them. Empty means any cluster.
	// +optional
	// +listType=set
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// SplitMode is how a replicated job is split.
// +kubebuilder:validation:Enum=static;auto
type SplitMode string

// Split modes.
const (
	// SplitModeStatic splits the accelerators equally over replicas child
	// jobs.
	SplitModeStatic SplitMode = "static"
	// SplitModeAuto lets the controller choose the number and size of the
	// child jobs from the clusters' free accelerators, within maxDomains.
	SplitModeAuto SplitMode = "auto"
)

// SplitPolicy says how the accelerators of a replicated job are divided into
// child jobs.
//
// +kubebuilder:validation:XValidation:rule="!has(self.accelerators) || has(self.acceleratorType)",message="acceleratorType must be set with accelerators: it names the resource whose count is split",fieldPath=.acceleratorType
type SplitPolicy struct {
	// Mode is static (equal shares over replicas child jobs) or auto (the
	// controller decides from free capacity).
	// +optional
	// +kubebuilder:default=static
	Mode SplitMode `json:"mode,omitempty"`

	// Accelerators is the total number of accelerators of acceleratorType the
	// replicated job needs across all its child jobs.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Accelerators *int32 `json:"accelerators,omitempty"`

	// AcceleratorType is the extended resource name of the accelerator, for
	// example "nvidia.com/gpu" or "huawei.com/ascend910b". The template's
	// containers request it.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	AcceleratorType *string `json:"acceleratorType,omitempty"`
}

// Condition types of a HyperJob. They are set only once every child job has
// finished, so a HyperJob without them is still in progress.
const (
	// HyperJobCompleted is True when every child job completed.
	HyperJobCompleted = "Completed"
	// HyperJobFailed is True when every child job finished and at least one
	// failed, was aborted or was terminated.
	HyperJobFailed = "Failed"
)

// HyperJobPhase is where a HyperJob is in its life.
// +kubebuilder:validation:Enum=Pending;Running;Restarting;Completed;Failed
type HyperJobPhase string

// HyperJob phases.
const (
	// HyperJobPending: not planned yet (no plan fits the clusters), or
	// planned with fewer children running than it needs.
	HyperJobPending HyperJobPhase = "Pending"
	// HyperJobRunning: at least minAvailable children (all, without it)
	// are running or done.
	HyperJobRunning HyperJobPhase = "Running"
	// HyperJobRestarting: its children are being brought down to be
	// planned again (a start timeout or a RestartAll failure policy).
	HyperJobRestarting HyperJobPhase = "Restarting"
	// HyperJobCompletedPhase: every child completed.
	HyperJobCompletedPhase HyperJobPhase = "Completed"
	// HyperJobFailedPhase: every child finished and one did not
	// complete, or the failure policy failed it.
	HyperJobFailedPhase HyperJobPhase = "Failed"
)

// HyperJobStatus is the state of a HyperJob, aggregated from its child jobs.
type HyperJobStatus struct {
	// Phase is where the HyperJob is in its life; its conditions say why.
	// +optional
	Phase HyperJobPhase `json:"phase,omitempty"`

	// Conditions are Completed or Failed once every child job has finished.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ReplicatedJobsStatus is the state of each replicated job.
	// +optional
	// +listType=map
	// +listMapKey=name
	ReplicatedJobsStatus []ReplicatedJobStatus `json:"replicatedJobsStatus,omitempty"`

	// SplitCount is the number of child jobs the HyperJob was split into.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SplitCount *int32 `json:"splitCount,omitempty"`

	// ObservedGeneration is the spec generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// RetryCount is how many times the failure policy restarted children.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RetryCount int32 `json:"retryCount,omitempty"`
}

// ReplicatedJobStatus is the state of the child jobs of one replicated job.
// The pod counts add up over all of them.
type ReplicatedJobStatus struct {
	// Name is the name of the replicated job.
	// +required
	Name string `json:"name"`

	// JobStates is the state of each child job, keyed by child job name.
	// +optional
	JobStates map[string]batchv1alpha1.JobState `json:"jobStates,omitempty"`

	// JobClusters is the member cluster of each planned child job, keyed
	// by child job name.
	// +optional
	JobClusters map[string]string `json:"jobClusters,omitempty"`

	// Pending is the number of pending pods.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Pending int32 `json:"pending,omitempty"`

	// Running is the number of running pods.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Running int32 `json:"running,omitempty"`

	// Succeeded is the number of pods that succeeded.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Succeeded int32 `json:"succeeded,omitempty"`

	// Failed is the number of pods that failed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Failed int32 `json:"failed,omitempty"`

	// Terminating is the number of pods being deleted.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Terminating int32 `json:"terminating,omitempty"`

	// Unknown is the number of pods whose state is unknown.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Unknown int32 `json:"unknown,omitempty"`
}

// HyperJobList is a list of HyperJobs.
//
// +kubebuilder:object:root=true
type HyperJobList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []HyperJob `json:"items"`
}
