// Package testing builds bus.volcano.sh/v1alpha1 objects for tests:
// MakeCommand("close", "default", busv1alpha1.CloseQueueAction).TargetQueue("q").Obj().
package testing

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
)

// CommandWrapper builds a Command.
type CommandWrapper struct{ cmd busv1alpha1.Command }

// MakeCommand starts a Command with an action and no target.
func MakeCommand(name, namespace string, action busv1alpha1.Action) *CommandWrapper {
	return &CommandWrapper{cmd: busv1alpha1.Command{
		TypeMeta:   metav1.TypeMeta{APIVersion: busv1alpha1.SchemeGroupVersion.String(), Kind: "Command"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Action:     string(action),
	}}
}

// Obj returns a copy of the built Command.
func (w *CommandWrapper) Obj() *busv1alpha1.Command { return w.cmd.DeepCopy() }

// Target sets the target.
func (w *CommandWrapper) Target(apiVersion, kind, name string) *CommandWrapper {
	w.cmd.TargetObject = &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name}
	return w
}

// TargetJob targets a batch.volcano.sh Job.
func (w *CommandWrapper) TargetJob(name string) *CommandWrapper {
	return w.Target("batch.volcano.sh/v1alpha1", "Job", name)
}

// TargetQueue targets a scheduling.volcano.sh Queue.
func (w *CommandWrapper) TargetQueue(name string) *CommandWrapper {
	return w.Target("scheduling.volcano.sh/v1beta1", "Queue", name)
}

// TargetUID sets target.uid; call after a Target method.
func (w *CommandWrapper) TargetUID(uid types.UID) *CommandWrapper {
	w.cmd.TargetObject.UID = uid
	return w
}

// UID sets metadata.uid.
func (w *CommandWrapper) UID(uid types.UID) *CommandWrapper {
	w.cmd.UID = uid
	return w
}

// Created sets the creation time.
func (w *CommandWrapper) Created(t metav1.Time) *CommandWrapper {
	w.cmd.CreationTimestamp = t
	return w
}
