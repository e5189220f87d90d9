//go:build integration

package scheduler

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/caldera-sh/caldera/pkg/component"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestEventSink: the scheduler's event sink creates an event, and counts a
// repeat of it as a series (a patch), as the typed client would.
func TestEventSink(t *testing.T) {
	const ns = "eventsink"
	createNamespace(t, ns)
	pod := st.MakePod(ns, "p").Obj()
	if err := fw.Client.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(fw.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	b := events.NewBroadcaster(component.NewEventSink(cs))
	if err := b.StartRecordingToSinkWithContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	rec := b.NewRecorder(scheme.Scheme, "eventsink-test")
	rec.Eventf(pod, nil, corev1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %s/%s to n1", ns, pod.Name)
	poll.Eventually(t, t.Context(), 30*time.Second, "the event created", func() (bool, string) {
		var l eventsv1.EventList
		if err := fw.Client.List(t.Context(), &l, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		return len(l.Items) == 1, fmt.Sprintf("%d events", len(l.Items))
	})
	rec.Eventf(pod, nil, corev1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %s/%s to n1", ns, pod.Name)
	poll.Eventually(t, t.Context(), 30*time.Second, "the repeat counted in the event's series", func() (bool, string) {
		var l eventsv1.EventList
		if err := fw.Client.List(t.Context(), &l, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		if len(l.Items) != 1 {
			return false, fmt.Sprintf("%d events", len(l.Items))
		}
		ev := l.Items[0]
		if ev.Regarding.Name != pod.Name || ev.Reason != "Scheduled" || ev.ReportingController != "eventsink-test" {
			return false, fmt.Sprintf("%+v", ev)
		}
		return ev.Series != nil && ev.Series.Count == 2, fmt.Sprintf("series %+v", ev.Series)
	})
}
