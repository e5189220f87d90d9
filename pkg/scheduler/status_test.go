package scheduler

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedtesting "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	"github.com/caldera-sh/caldera/pkg/scheduler/api"
	"github.com/caldera-sh/caldera/pkg/scheduler/cache"
	"github.com/caldera-sh/caldera/pkg/scheduler/framework"
)

type countingSink struct{ applied int }

func (s *countingSink) Apply(*api.Snapshot, map[api.JobID]*framework.JobOutcome, map[api.JobID]bool, metav1.Time) {
	s.applied++
}

// A Queue that changes (say its status, shown late after a watch was cut)
// has its status compared again, with nothing else to do: a write the
// informer had not shown when the status was last compared would otherwise
// stay on the Queue.
func TestQueueChangeSyncsQueueStatus(t *testing.T) {
	c := cache.New(cache.Options{})
	sink := &countingSink{}
	s := New(c, Options{Status: sink})
	c.UpdateQueue(schedtesting.MakeQueue("q").Obj())
	s.syncStatus(t.Context())
	if sink.applied != 1 {
		t.Fatalf("after a Queue change: %d status syncs, want 1", sink.applied)
	}
	s.syncStatus(t.Context())
	if sink.applied != 1 {
		t.Errorf("with nothing changed: %d status syncs, want still 1", sink.applied)
	}
	c.UpdateQueue(schedtesting.MakeQueue("q").Obj())
	s.syncStatus(t.Context())
	if sink.applied != 2 {
		t.Errorf("after the Queue changed again: %d status syncs, want 2", sink.applied)
	}
}
