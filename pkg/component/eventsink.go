package component

import (
	"context"
	"fmt"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
)

// EventSink writes events.k8s.io/v1 Events with plain requests. The typed
// client's writes encode empty create, update and patch options into query
// parameters through the scheme's conversions on every call; a scheduler
// writes an event for each pod it binds, and this sink skips that work. The
// requests are otherwise the typed client's: same paths, bodies and
// encoding, the client's content type and rate limits.
type EventSink struct {
	client rest.Interface
}

var _ events.EventSink = EventSink{}

// NewEventSink returns a sink writing through the clientset's events.k8s.io
// client.
func NewEventSink(cs kubernetes.Interface) EventSink {
	return EventSink{client: cs.EventsV1().RESTClient()}
}

// Create creates the event.
func (s EventSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	if ev.Namespace == "" {
		return nil, fmt.Errorf("event %q: no namespace", ev.Name)
	}
	out := &eventsv1.Event{}
	err := s.client.Post().Namespace(ev.Namespace).Resource("events").Body(ev).Do(ctx).Into(out)
	return out, err
}

// Update replaces the event.
func (s EventSink) Update(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	if ev.Namespace == "" {
		return nil, fmt.Errorf("event %q: no namespace", ev.Name)
	}
	out := &eventsv1.Event{}
	err := s.client.Put().Namespace(ev.Namespace).Resource("events").Name(ev.Name).Body(ev).Do(ctx).Into(out)
	return out, err
}

// Patch applies a strategic merge patch to the event, as the event library
// does to count a series.
func (s EventSink) Patch(ctx context.Context, ev *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	if ev.Namespace == "" {
		return nil, fmt.Errorf("event %q: no namespace", ev.Name)
	}
	out := &eventsv1.Event{}
	err := s.client.Patch(types.StrategicMergePatchType).Namespace(ev.Namespace).Resource("events").Name(ev.Name).Body(data).Do(ctx).Into(out)
	return out, err
}
