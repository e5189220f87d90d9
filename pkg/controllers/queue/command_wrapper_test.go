package queue

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
)

// commandWrapper builds a Command.
type commandWrapper struct{ busv1alpha1.Command }

// makeCommand starts a Command in namespace "default" with the given action
// addressed to a queue, created at t0.
func makeCommand(name string, action busv1alpha1.Action, queue string) *commandWrapper {
	return &commandWrapper{busv1alpha1.Command{
		TypeMeta: metav1.TypeMeta{APIVersion: busv1alpha1.SchemeGroupVersion.String(), Kind: "Command"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(t0)},
		Action: string(action),
		TargetObject: &metav1.OwnerReference{
			APIVersion: "scheduling.volcano.sh/v1beta1", Kind: "Queue", Name: queue, UID: types.UID("uid-" + queue),
		},
	}}
}

func (c *commandWrapper) Obj() *busv1alpha1.Command { return &c.Command }

// Created sets the creation time, after t0.
func (c *commandWrapper) Created(after time.Duration) *commandWrapper {
	c.CreationTimestamp = metav1.NewTime(t0.Add(after))
	return c
}

// Target sets the target's apiVersion and kind.
func (c *commandWrapper) Target(apiVersion, kind string) *commandWrapper {
	c.TargetObject.APIVersion, c.TargetObject.Kind = apiVersion, kind
	return c
}
