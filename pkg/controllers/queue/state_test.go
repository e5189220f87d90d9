package queue

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

func TestNext(t *testing.T) {
	const (
		open    = schedulingv1beta1.QueueStateOpen
		closing = schedulingv1beta1.QueueStateClosing
		closed  = schedulingv1beta1.QueueStateClosed
		unknown = schedulingv1beta1.QueueStateUnknown
	)
	cases := map[string]struct {
		observed    Observed
		action      Action
		want        Decision
		wantRefusal *Refusal
	}{
		"a new queue opens": {
			observed: Observed{},
			want:     Decision{State: open},
		},
		"an open queue stays open": {
			observed: Observed{State: open, Active: 3},
			want:     Decision{State: open},
		},
		"closing a queue without active groups closes it": {
			observed: Observed{State: open},
			action:   Close,
			want:     Decision{State: closed},
		},
		"closing a queue with active groups leaves it closing": {
			observed: Observed{State: open, Active: 2},
			action:   Close,
			want:     Decision{State: closing},
		},
		"a closing queue closes when its last group ends": {
			observed: Observed{State: closing},
			want:     Decision{State: closed},
		},
		"a closing queue stays closing while groups are active": {
			observed: Observed{State: closing, Active: 1},
			want:     Decision{State: closing},
		},
		"a closing queue stays closing while the scheduler counts a group active its PodGroup does not show yet": {
			observed: Observed{State: closing, ScheduledActive: 1},
			want:     Decision{State: closing},
		},
		"a queue marked Closed by hand while groups run is closing": {
			observed: Observed{State: closed, Active: 1},
			want:     Decision{State: closing},
		},
		"closing a closed queue again changes nothing": {
			observed: Observed{State: closed},
			action:   Close,
			want:     Decision{State: closed},
		},
		"opening a closed queue opens it": {
			observed: Observed{State: closed},
			action:   Open,
			want:     Decision{State: open},
		},
		"opening a closing queue opens it": {
			observed: Observed{State: closing, Active: 4},
			action:   Open,
			want:     Decision{State: open},
		},
		"root cannot be closed": {
			observed:    Observed{Root: true, State: open},
			action:      Close,
			want:        Decision{State: open},
			wantRefusal: &Refusal{Reason: "RootQueue", Message: "the root queue cannot be closed"},
		},
		"root written Closed by hand is reopened": {
			observed: Observed{Root: true, State: closed},
			want:     Decision{State: open},
		},
		"the child of a closed parent is closed and marked": {
			observed: Observed{State: open, ParentClosed: true},
			want:     Decision{State: closed, ClosedByParent: true},
		},
		"the child of a closing parent with active groups is closing and marked": {
			observed: Observed{State: open, ParentClosed: true, Active: 1},
			want:     Decision{State: closing, ClosedByParent: true},
		},
		"the child of a closed parent cannot be opened, and waits": {
			observed:    Observed{State: closed, ParentClosed: true, ClosedByParent: true},
			action:      Open,
			want:        Decision{State: closed, ClosedByParent: true},
			wantRefusal: &Refusal{Reason: "ParentClosed", Message: "its parent queue is closed; open the parent first", Wait: true},
		},
		"a child closed by its parent reopens with the parent": {
			observed: Observed{State: closed, ClosedByParent: true},
			want:     Decision{State: open},
		},
		"a child closed by hand stays closed when the parent reopens": {
			observed: Observed{State: closed},
			want:     Decision{State: closed},
		},
		"closing a child closed by its parent makes the close its own": {
			observed: Observed{State: closed, ParentClosed: true, ClosedByParent: true},
			action:   Close,
			want:     Decision{State: closed},
		},
		"an open queue drops a leftover mark": {
			observed: Observed{State: open, ClosedByParent: true},
			want:     Decision{State: open},
		},
		"unknown stays unknown on a sync": {
			observed: Observed{State: unknown, Active: 1},
			want:     Decision{State: unknown},
		},
		"unknown is settled by a command": {
			observed: Observed{State: unknown, Active: 1},
			action:   Close,
			want:     Decision{State: closing},
		},
		"a job action addressed to a queue is refused": {
			observed:    Observed{State: open},
			action:      Action("AbortJob"),
			want:        Decision{State: open},
			wantRefusal: &Refusal{Reason: "UnsupportedAction", Message: `a queue supports the actions OpenQueue and CloseQueue, not "AbortJob"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, refusal := Next(tc.observed, tc.action)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRefusal, refusal); diff != "" {
				t.Errorf("refusal (-want,+got):\n%s", diff)
			}
			// Deciding again from the decision changes nothing: a sync
			// after the write is a no-op.
			o := tc.observed
			o.State, o.ClosedByParent = got.State, got.ClosedByParent
			if again, _ := Next(o, Sync); again != got {
				t.Errorf("not idempotent: %+v, then %+v", got, again)
			}
		})
	}
}

func TestActive(t *testing.T) {
	cases := map[schedulingv1beta1.PodGroupPhase]bool{
		"":                                  false,
		schedulingv1beta1.PodGroupPending:   false,
		schedulingv1beta1.PodGroupInqueue:   true,
		schedulingv1beta1.PodGroupRunning:   true,
		schedulingv1beta1.PodGroupUnknown:   true,
		schedulingv1beta1.PodGroupCompleted: false,
	}
	for phase, want := range cases {
		if got := Active(phase); got != want {
			t.Errorf("Active(%q) = %v, want %v", phase, got, want)
		}
	}
}
