// Package actions lists the scheduler's actions.
package actions

import (
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/backfill"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/enqueue"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/preempt"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/reclaim"
	configv1alpha1 "github.com/caldera-sh/caldera/pkg/scheduler/config/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// NewRegistry returns a constructor for every action this build provides,
// each taking the (defaulted) configuration.
func NewRegistry() map[string]func(cfg *configv1alpha1.SchedulerConfiguration) framework.Action {
	return map[string]func(*configv1alpha1.SchedulerConfiguration) framework.Action{
		allocate.Name: func(*configv1alpha1.SchedulerConfiguration) framework.Action { return allocate.New() },
		backfill.Name: func(*configv1alpha1.SchedulerConfiguration) framework.Action { return backfill.New() },
		enqueue.Name:  func(*configv1alpha1.SchedulerConfiguration) framework.Action { return enqueue.New() },
		preempt.Name: func(cfg *configv1alpha1.SchedulerConfiguration) framework.Action {
			return preempt.New(candidates(cfg))
		},
		reclaim.Name: func(cfg *configv1alpha1.SchedulerConfiguration) framework.Action {
			return reclaim.New(candidates(cfg))
		},
	}
}

// candidates is the preemption configuration's bound on candidate nodes.
func candidates(cfg *configv1alpha1.SchedulerConfiguration) func(int) int {
	p := cfg.Preemption
	return framework.CandidateNodes(int(*p.MinCandidateNodesPercentage), int(*p.MinCandidateNodesAbsolute), int(*p.MaxCandidateNodesAbsolute))
}
