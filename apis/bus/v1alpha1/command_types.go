package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Action is what a Command asks the owner of its target to do.
type Action string

// Actions a Command may carry. Job actions are executed by the Job controller,
// queue actions by the Queue controller.
const (
	AbortJobAction     Action = "AbortJob"
	RestartJobAction   Action = "RestartJob"
	RestartTaskAction  Action = "RestartTask"
	RestartPodAction   Action = "RestartPod"
	TerminateJobAction Action = "TerminateJob"
	CompleteJobAction  Action = "CompleteJob"
	ResumeJobAction    Action = "ResumeJob"

	OpenQueueAction  Action = "OpenQueue"
	CloseQueueAction Action = "CloseQueue"
)

// Command is a one-shot instruction for the object named by target. The
// controller that owns the target executes it once and deletes it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=commands,scope=Namespaced
// +kubebuilder:printcolumn:name="Action",type=string,JSONPath=`.action`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.target.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Command struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Action is the action to take on the target, for example AbortJob,
	// ResumeJob, RestartJob, OpenQueue or CloseQueue.
	// +optional
	Action string `json:"action,omitempty"`

	// TargetObject is the object the command is addressed to.
	// +optional
	TargetObject *metav1.OwnerReference `json:"target,omitempty"`

	// Reason is a unique, one-word, CamelCase reason for this command.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Message is a human-readable explanation of this command.
	// +optional
	Message string `json:"message,omitempty"`
}

// CommandList is a list of Commands.
//
// +kubebuilder:object:root=true
type CommandList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Command `json:"items"`
}
