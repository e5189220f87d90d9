package queue

import (
	"fmt"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// Action is what is asked of a queue: a sync, or a bus Command's OpenQueue or
// CloseQueue.
type Action string

// Actions.
const (
	// Sync recomputes the state from what the queue, its parent and its
	// PodGroups show.
	Sync  Action = ""
	Open  Action = Action(schedulingv1beta1.OpenQueueAction)
	Close Action = Action(schedulingv1beta1.CloseQueueAction)
)

// Observed is what a queue's state is decided from.
type Observed struct {
	// Root: the queue is the root queue, which is never closed.
	Root bool
	// State is the queue's status.state now. It is also where the intent to
	// close is kept: Closing and Closed mean closed, "" and Open mean open.
	State schedulingv1beta1.QueueState
	// ClosedByParent: the queue carries volcano.sh/closed-by-parent "true".
	ClosedByParent bool
	// ParentClosed: the queue's parent exists and is Closing or Closed.
	ParentClosed bool
	// Active is the number of the queue's PodGroups that were admitted and
	// have not finished: Inqueue, Running or Unknown.
	Active int
	// ScheduledActive is the same as the scheduler counts it in the
	// queue's status, from the phases it decided, which may reach a
	// PodGroup later than its counts reach the queue (writeback.StartHold).
	ScheduledActive int
}

// Decision is the state a queue should show.
type Decision struct {
	State schedulingv1beta1.QueueState
	// ClosedByParent is the desired volcano.sh/closed-by-parent mark.
	ClosedByParent bool
}

// Refusal says why an action was not carried out.
type Refusal struct {
	// Reason is a CamelCase event reason.
	Reason  string
	Message string
	// Wait: the action may become possible (a parent being reopened); the
	// command is kept for a while rather than dropped.
	Wait bool
}

// Next decides a queue's state after an action, following Volcano's queue
// controller:
//   - CloseQueue closes the queue (never root) and clears the closed-by-parent
//     mark, so that reopening the parent does not reopen a queue an
//     administrator closed;
//   - OpenQueue opens it and clears the mark, unless its parent is closed;
//   - a queue whose parent is Closing or Closed is closed too and marked
//     closed-by-parent; it is reopened, and unmarked, when the parent is
//     open again, if still marked;
//   - a closed queue is Closing while it has active PodGroups, Closed when it
//     has none;
//   - an unset state is Open; Unknown stays until a command settles it.
//
// A refused action leaves the state to the sync rules alone.
func Next(o Observed, a Action) (Decision, *Refusal) {
	closed := o.State == schedulingv1beta1.QueueStateClosed || o.State == schedulingv1beta1.QueueStateClosing
	unknown := o.State == schedulingv1beta1.QueueStateUnknown
	mark := o.ClosedByParent

	var refusal *Refusal
	switch a {
	case Sync:
	case Close:
		if o.Root {
			refusal = &Refusal{Reason: "RootQueue", Message: "the root queue cannot be closed"}
			break
		}
		closed, unknown, mark = true, false, false
	case Open:
		if o.ParentClosed && !o.Root {
			refusal = &Refusal{Reason: "ParentClosed", Message: "its parent queue is closed; open the parent first", Wait: true}
			break
		}
		closed, unknown, mark = false, false, false
	default:
		refusal = &Refusal{Reason: "UnsupportedAction", Message: fmt.Sprintf("a queue supports the actions %s and %s, not %q", Open, Close, string(a))}
	}

	switch {
	case o.Root:
		closed, unknown = false, false
	case o.ParentClosed && !closed:
		closed, unknown, mark = true, false, true
	case !o.ParentClosed && mark:
		// Reopened with the parent; an open queue drops a leftover mark.
		closed, mark = false, false
	}

	d := Decision{State: schedulingv1beta1.QueueStateOpen, ClosedByParent: mark}
	switch {
	case unknown:
		d.State = schedulingv1beta1.QueueStateUnknown
	case closed && max(o.Active, o.ScheduledActive) > 0:
		d.State = schedulingv1beta1.QueueStateClosing
	case closed:
		d.State = schedulingv1beta1.QueueStateClosed
	}
	return d, refusal
}

// Active reports whether a PodGroup in phase p keeps a closing queue from
// being closed: it was admitted and has not finished. A Pending group is
// never admitted into a closed queue, so it does not hold the queue open.
func Active(p schedulingv1beta1.PodGroupPhase) bool {
	switch p {
	case schedulingv1beta1.PodGroupInqueue, schedulingv1beta1.PodGroupRunning, schedulingv1beta1.PodGroupUnknown:
		return true
	}
	return false
}
