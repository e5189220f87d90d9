// Package v1alpha1 holds the bus.volcano.sh/v1alpha1 API: Command, a one-shot
// instruction (abort, resume, restart a Job; open or close a Queue) addressed
// to an object and executed once by the controller that owns the target.
//
// +kubebuilder:object:generate=true
// +groupName=bus.volcano.sh
package v1alpha1
