package testing

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
)

// OnEvents is a lifecycle policy that takes action on any of events (all
// placed in events).
func OnEvents(action busv1alpha1.Action, events ...batchv1alpha1.Event) batchv1alpha1.LifecyclePolicy {
	return batchv1alpha1.LifecyclePolicy{Action: action, Events: events}
}

// OnEvent is a lifecycle policy that takes action on one event (placed in
// event).
func OnEvent(action busv1alpha1.Action, event batchv1alpha1.Event) batchv1alpha1.LifecyclePolicy {
	return batchv1alpha1.LifecyclePolicy{Action: action, Event: event}
}

// OnExitCode is a lifecycle policy that takes action when a container exits
// with code.
func OnExitCode(action busv1alpha1.Action, code int32) batchv1alpha1.LifecyclePolicy {
	return batchv1alpha1.LifecyclePolicy{Action: action, ExitCode: &code}
}

// After returns p with a timeout.
func After(p batchv1alpha1.LifecyclePolicy, d time.Duration) batchv1alpha1.LifecyclePolicy {
	p.Timeout = &metav1.Duration{Duration: d}
	return p
}

// OnOOMKilled is a policy that raises an OOM-killed task's memory by percent
// (0 leaves the default) up to maxMemory and restarts it.
func OnOOMKilled(percent int32, maxMemory string) batchv1alpha1.LifecyclePolicy {
	return batchv1alpha1.LifecyclePolicy{
		Action:        batchv1alpha1.RestartTaskWithMoreMemoryAction,
		Event:         batchv1alpha1.OOMKilledEvent,
		MemoryScaling: &batchv1alpha1.MemoryScaling{IncreasePercent: percent, MaxMemory: resource.MustParse(maxMemory)},
	}
}
