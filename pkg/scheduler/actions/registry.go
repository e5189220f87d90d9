// Package actions lists the scheduler's actions.
package actions

import (
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/allocate"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/backfill"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/enqueue"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/preempt"
	"github.com/caldera-sh/caldera/pkg/scheduler/actions/reclaim"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

// NewRegistry returns a constructor for every action this build provides.
func NewRegistry() map[string]func() framework.Action {
	return map[string]func() framework.Action{
		allocate.Name: func() framework.Action { return allocate.New() },
		backfill.Name: func() framework.Action { return backfill.New() },
		enqueue.Name:  func() framework.Action { return enqueue.New() },
		preempt.Name:  func() framework.Action { return preempt.New() },
		reclaim.Name:  func() framework.Action { return reclaim.New() },
	}
}
