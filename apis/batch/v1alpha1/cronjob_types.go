package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CronJob creates a Job from its template on a cron schedule.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=cronjobs,shortName={cronvcjob,cronvj},scope=Namespaced
// +kubebuilder:printcolumn:name="SCHEDULE",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="TIMEZONE",type=string,JSONPath=`.spec.timeZone`
// +kubebuilder:printcolumn:name="SUSPEND",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="ACTIVE",type=string,JSONPath=`.status.active[*].name`
// +kubebuilder:printcolumn:name="LAST SCHEDULE",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type CronJob struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the schedule and the Job to create.
	// +required
	Spec CronJobSpec `json:"spec"`

	// Status is what the cron job controller observed.
	// +optional
	Status CronJobStatus `json:"status,omitempty"`
}

// CronJobList is a list of CronJobs.
//
// +kubebuilder:object:root=true
type CronJobList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []CronJob `json:"items"`
}

// ConcurrencyPolicy says what happens when a run is due while an earlier
// Job of the same CronJob has not finished.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// AllowConcurrent runs the new Job beside the earlier ones.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent skips the run while an earlier Job is active; the
	// run starts once it finishes, if still within
	// startingDeadlineSeconds.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent deletes the active Jobs and starts the new one.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// CronJobSpec is the desired state of a CronJob.
type CronJobSpec struct {
	// Schedule in cron format: five fields (minute hour day-of-month month
	// day-of-week) or a descriptor such as @hourly.
	// +kubebuilder:validation:MinLength=1
	// +required
	Schedule string `json:"schedule"`

	// TimeZone is the IANA time zone the schedule is read in, e.g.
	// "Europe/Berlin"; unset means the controller's (UTC in Caldera's
	// images).
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// StartingDeadlineSeconds: a run that could not start within this many
	// seconds of its time is skipped. Unset means no deadline.
	// +kubebuilder:validation:Minimum=0
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// ConcurrencyPolicy: Allow (default), Forbid or Replace.
	// +kubebuilder:default=Allow
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// Suspend stops new runs; Jobs already created are left alone.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// JobTemplate is the Job each run creates.
	// +required
	JobTemplate JobTemplateSpec `json:"jobTemplate"`

	// SuccessfulJobsHistoryLimit is how many completed Jobs are kept
	// (default 3).
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +optional
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// FailedJobsHistoryLimit is how many failed, terminated or aborted Jobs
	// are kept (default 1).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`
}

// JobTemplateSpec is a Job to create: its labels and annotations, and its
// spec.
type JobTemplateSpec struct {
	// Standard object metadata of the Jobs created; labels and annotations
	// are copied.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec of the Jobs created.
	// +required
	Spec JobSpec `json:"spec"`
}

// CronJobStatus is the observed state of a CronJob.
type CronJobStatus struct {
	// Active are the CronJob's Jobs that have not finished.
	// +optional
	// +listType=atomic
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// LastScheduleTime is the scheduled time of the latest run started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// LastSuccessfulTime is when the latest of its Jobs completed.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`
}
