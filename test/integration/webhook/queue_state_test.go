//go:build integration

package webhook

import (
	"fmt"
	"testing"
	"time"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestPodsFollowTheQueueState closes and reopens a queue: a pod for it is
// refused while it is closed and accepted once it is open again.
func TestPodsFollowTheQueueState(t *testing.T) {
	fixtures(t)
	create(t, queue("flip").Obj())
	setQueueState(t, "flip", schedulingv1beta1.QueueStateOpen)
	n := 0
	podFor := func() error {
		n++
		return fw.Client.Create(t.Context(), st.MakePod(ns, fmt.Sprintf("flip-%d", n)).
			Annotation(schedulingv1beta1.QueueNameAnnotation, "flip").Obj())
	}
	if err := podFor(); err != nil {
		t.Fatalf("pod for an open queue: %v", err)
	}

	setQueueState(t, "flip", schedulingv1beta1.QueueStateClosed)
	// The webhook's cache follows the queue within moments.
	poll.Eventually(t, t.Context(), 30*time.Second, "a pod for the closed queue is refused", func() (bool, string) {
		return succeeded(refusedWith(podFor(), `metadata.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "flip": queue is Closed: it accepts no new work until it is opened`))
	})

	setQueueState(t, "flip", schedulingv1beta1.QueueStateOpen)
	// Reopening takes effect at once: a refusal is confirmed with the API
	// server, which already has the queue open.
	if err := podFor(); err != nil {
		t.Errorf("pod for the reopened queue: %v", err)
	}
}
