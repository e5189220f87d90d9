package framework

import (
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
)

// JobPhase is the PodGroup phase a job is in after a cycle (api.JobPhase):
// Running once enough tasks are placed or running to meet its minimum;
// Unknown when a job that was Running dropped below it; Completed when every
// task has ended and enough succeeded; otherwise Inqueue once admitted, else
// Pending.
func JobPhase(job *api.JobInfo) schedulingv1beta1.PodGroupPhase { return api.JobPhase(job) }

// Admitted reports whether a job may be placed: its PodGroup was admitted
// (Inqueue or later), or it is a pod without a PodGroup.
func Admitted(job *api.JobInfo) bool { return job.Admitted() }
