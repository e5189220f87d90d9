package queue

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	testingbus "github.com/caldera-sh/caldera/apis/bus/v1alpha1/testing"
)

// makeCommand starts a Command in namespace "default" with the given action
// addressed to a queue, created at t0; the Command's and the queue's UIDs
// are "uid-<name>".
func makeCommand(name string, action busv1alpha1.Action, queue string) *testingbus.CommandWrapper {
	return testingbus.MakeCommand(name, "default", action).UID(types.UID("uid-" + name)).
		TargetQueue(queue).TargetUID(types.UID("uid-" + queue)).Created(at(0))
}

// at is t0 and after.
func at(after time.Duration) metav1.Time { return metav1.NewTime(t0.Add(after)) }
