package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
)

// JobTemplate is a Volcano Job spec kept for JobFlows to run; nothing runs
// it by itself.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=jobtemplates,shortName={jt},scope=Namespaced
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type JobTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the Job spec each flow that names the template runs.
	// +optional
	Spec batchv1alpha1.JobSpec `json:"spec,omitempty"`

	// Status lists the Jobs made from the template.
	// +optional
	Status JobTemplateStatus `json:"status,omitempty"`
}

// JobTemplateStatus is the observed state of a JobTemplate.
type JobTemplateStatus struct {
	// JobDependsOnList names the Jobs made from the template.
	// +optional
	JobDependsOnList []string `json:"jobDependsOnList,omitempty"`
}

// JobTemplateList is a list of JobTemplates.
//
// +kubebuilder:object:root=true
type JobTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []JobTemplate `json:"items"`
}

// JobFlow runs a Job for each of its flows, from the JobTemplate of the
// flow's name, once the flows it depends on have completed.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=jobflows,shortName={jf},scope=Namespaced
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.state.phase`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type JobFlow struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the flows and what becomes of their Jobs.
	// +optional
	Spec JobFlowSpec `json:"spec,omitempty"`

	// Status is the flows' progress.
	// +optional
	Status JobFlowStatus `json:"status,omitempty"`
}

// JobFlowList is a list of JobFlows.
//
// +kubebuilder:object:root=true
type JobFlowList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []JobFlow `json:"items"`
}

// RetainPolicy says what becomes of a flow's Jobs once the JobFlow
// succeeds.
// +kubebuilder:validation:Enum=retain;delete
type RetainPolicy string

const (
	// Retain keeps the Jobs.
	Retain RetainPolicy = "retain"
	// Delete deletes the Jobs once every one has completed.
	Delete RetainPolicy = "delete"
)

// JobFlowSpec is the desired state of a JobFlow.
type JobFlowSpec struct {
	// Flows are the Jobs to run, each named after its JobTemplate.
	// +optional
	// +listType=atomic
	Flows []Flow `json:"flows,omitempty"`

	// JobRetainPolicy: retain (default) or delete the Jobs once the flow
	// succeeds.
	// +kubebuilder:default=retain
	// +optional
	JobRetainPolicy RetainPolicy `json:"jobRetainPolicy,omitempty"`
}

// Flow is one Job of a JobFlow.
type Flow struct {
	// Name is the JobTemplate the Job is made from; the Job is named
	// <jobflow>-<name>.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// DependsOn are what must hold before the Job is created.
	// +optional
	DependsOn *DependsOn `json:"dependsOn,omitempty"`

	// Patch changes the template's spec for this flow's Job.
	// +optional
	Patch *Patch `json:"patch,omitempty"`
}

// DependsOn is what a flow waits for.
type DependsOn struct {
	// Targets are flows whose Jobs must have completed.
	// +optional
	// +listType=atomic
	Targets []string `json:"targets,omitempty"`

	// Probe are further conditions on the targets' tasks.
	// +optional
	Probe *Probe `json:"probe,omitempty"`
}

// Probe lists conditions a flow waits for besides its targets' completion.
type Probe struct {
	// HTTPGetList: an HTTP GET to a task's pods answers 2xx.
	// +optional
	// +listType=atomic
	HTTPGetList []HTTPGet `json:"httpGetList,omitempty"`

	// TCPSocketList: a task's pods accept a TCP connection.
	// +optional
	// +listType=atomic
	TCPSocketList []TCPSocket `json:"tcpSocketList,omitempty"`

	// TaskStatusList: a task of a target reaches a phase.
	// +optional
	// +listType=atomic
	TaskStatusList []TaskStatus `json:"taskStatusList,omitempty"`
}

// HTTPGet is an HTTP probe of a task.
type HTTPGet struct {
	// +optional
	TaskName string `json:"taskName,omitempty"`
	// +optional
	Path string `json:"path,omitempty"`
	// +optional
	Port int `json:"port,omitempty"`
	// +optional
	HTTPHeader *HTTPHeader `json:"httpHeader,omitempty"`
}

// HTTPHeader is a header of an HTTP probe.
type HTTPHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// TCPSocket is a TCP probe of a task.
type TCPSocket struct {
	// +optional
	TaskName string `json:"taskName,omitempty"`
	Port     int    `json:"port"`
}

// TaskStatus is a task phase a flow waits for.
type TaskStatus struct {
	// +optional
	TaskName string `json:"taskName,omitempty"`
	// +optional
	Phase string `json:"phase,omitempty"`
}

// Patch is a partial Job spec merged over the template's.
type Patch struct {
	// JobSpec holds the fields of the Job spec to change, merged over the
	// template's as a JSON merge patch (RFC 7386): a field set replaces the
	// template's, a list replaces the whole list, null removes a field.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	JobSpec *runtime.RawExtension `json:"jobSpec,omitempty"`
}

// Phase is a JobFlow's phase.
type Phase string

// The phases of a JobFlow.
const (
	Pending     Phase = "Pending"
	Running     Phase = "Running"
	Succeed     Phase = "Succeed"
	Failed      Phase = "Failed"
	Terminating Phase = "Terminating"
)

// State is a JobFlow's state.
type State struct {
	// +optional
	Phase Phase `json:"phase,omitempty"`
}

// JobFlowStatus is the observed state of a JobFlow.
type JobFlowStatus struct {
	// The flows' Jobs by phase; a flow not started yet is pending.
	// +optional
	PendingJobs []string `json:"pendingJobs,omitempty"`
	// +optional
	RunningJobs []string `json:"runningJobs,omitempty"`
	// +optional
	FailedJobs []string `json:"failedJobs,omitempty"`
	// +optional
	CompletedJobs []string `json:"completedJobs,omitempty"`
	// +optional
	TerminatedJobs []string `json:"terminatedJobs,omitempty"`
	// +optional
	UnKnowJobs []string `json:"unKnowJobs,omitempty"`

	// JobStatusList is each Job's progress.
	// +optional
	// +listType=atomic
	JobStatusList []JobStatus `json:"jobStatusList,omitempty"`

	// Conditions are each Job's phase and task counts, by Job name.
	// +optional
	Conditions map[string]Condition `json:"conditions,omitempty"`

	// State is the JobFlow's phase.
	// +optional
	State State `json:"state,omitempty"`
}

// JobStatus is one Job's progress.
type JobStatus struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	State batchv1alpha1.JobPhase `json:"state,omitempty"`
	// +optional
	StartTimestamp metav1.Time `json:"startTimestamp,omitempty"`
	// +optional
	EndTimestamp metav1.Time `json:"endTimestamp,omitempty"`
	// +optional
	RestartCount int32 `json:"restartCount,omitempty"`
	// +optional
	// +listType=atomic
	RunningHistories []JobRunningHistory `json:"runningHistories,omitempty"`
}

// JobRunningHistory is one phase a Job went through.
type JobRunningHistory struct {
	// +optional
	StartTimestamp metav1.Time `json:"startTimestamp,omitempty"`
	// +optional
	EndTimestamp metav1.Time `json:"endTimestamp,omitempty"`
	// +optional
	State batchv1alpha1.JobPhase `json:"state,omitempty"`
}

// Condition is one Job's phase and its tasks' counts.
type Condition struct {
	// +optional
	Phase batchv1alpha1.JobPhase `json:"phase,omitempty"`
	// +optional
	CreateTime *metav1.Time `json:"createTime,omitempty"`
	// +optional
	RunningDuration *metav1.Duration `json:"runningDuration,omitempty"`
	// TaskStatusCount counts each task's pods by phase.
	// +optional
	TaskStatusCount map[string]batchv1alpha1.TaskState `json:"taskStatusCount,omitempty"`
}
