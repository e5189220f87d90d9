// Package rbwebhook holds new ResourceBindings of queued work back from
// Karmada's scheduler: a mutating webhook on the Karmada API server sets
// spec.suspension.scheduling: true on the bindings of workloads that
// belong to a Caldera queue. The dispatcher places the work in a member
// (spec.clusters) when it may run and leaves the suspension, so that
// Karmada's scheduler never moves it. Of the suspension only that field is
// written: a dispatching suspension the user set stays as it is.
//
// Queued work is a Volcano Job (every Job has a queue, "default" when it
// names none), and any workload that names a queue in the label or
// annotation volcano.sh/queue-name (or scheduling.volcano.sh/queue-name),
// or that belongs to a PodGroup (annotation scheduling.k8s.io/group-name).
//
// The queue is recorded on the binding in the annotation
// dispatch.caldera.sh/queue, so that the dispatcher need not read
// templates of every kind.
//
// The webhook never refuses a binding. It is registered with
// failurePolicy Fail and a short timeout: a binding the webhook cannot
// answer for is refused for now and created again by Karmada's detector,
// which retries; with Ignore, it would be scheduled past the queues.
package rbwebhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
)

// Keys that put a workload in a queue or a PodGroup.
const (
	QueueLabel          = "volcano.sh/queue-name"
	QueueAnnotation     = "scheduling.volcano.sh/queue-name"
	GroupNameAnnotation = "scheduling.k8s.io/group-name"
)

// DataClaimsAnnotation lists, on a binding, the DataSourceClaims of its
// workload that existed when the binding was made: the dispatcher waits to
// see them before it places the work.
const DataClaimsAnnotation = "dispatch.caldera.sh/data-claims"

// Workload is what the webhook knows of a binding's template.
type Workload struct {
	APIVersion, Kind string
	// Object is the template, nil when it could not be read.
	Object *unstructured.Unstructured
}

// QueueOf returns the queue a binding's workload belongs to, and whether
// it belongs to one.
func QueueOf(w Workload) (string, bool) {
	gv, _ := schema.ParseGroupVersion(w.APIVersion)
	if gv.Group == "batch.volcano.sh" && w.Kind == "Job" {
		if w.Object != nil {
			if q, _, _ := unstructured.NestedString(w.Object.Object, "spec", "queue"); q != "" {
				return q, true
			}
		}
		return schedulingv1beta1.DefaultQueue, true
	}
	if w.Object == nil {
		return "", false
	}
	for _, m := range []map[string]string{w.Object.GetLabels(), w.Object.GetAnnotations(), podTemplateMeta(w.Object, "labels"), podTemplateMeta(w.Object, "annotations")} {
		for _, k := range []string{QueueLabel, QueueAnnotation} {
			if q := m[k]; q != "" {
				return q, true
			}
		}
	}
	if w.Object.GetAnnotations()[GroupNameAnnotation] != "" || podTemplateMeta(w.Object, "annotations")[GroupNameAnnotation] != "" {
		return schedulingv1beta1.DefaultQueue, true
	}
	return "", false
}

// podTemplateMeta reads spec.template.metadata.<field> of a workload.
func podTemplateMeta(obj *unstructured.Unstructured, field string) map[string]string {
	m, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "template", "metadata", field)
	return m
}

// SuspendPatch is the JSON patch that sets spec.suspension.scheduling to
// true, leaving the rest of the suspension alone, and records the queue in
// the annotation dispatch.QueueOfBindingAnnotation; nil when both are so already.
func SuspendPatch(rb *workv1alpha2.ResourceBinding, queue string) []map[string]any {
	var out []map[string]any
	switch sus := rb.Spec.Suspension; {
	case sus == nil:
		out = append(out, map[string]any{"op": "add", "path": "/spec/suspension", "value": map[string]any{"scheduling": true}})
	case sus.Scheduling == nil || !*sus.Scheduling:
		out = append(out, map[string]any{"op": "add", "path": "/spec/suspension/scheduling", "value": true})
	}
	switch {
	case rb.Annotations == nil:
		out = append(out, map[string]any{"op": "add", "path": "/metadata/annotations", "value": map[string]any{dispatch.QueueOfBindingAnnotation: queue}})
	case rb.Annotations[dispatch.QueueOfBindingAnnotation] != queue:
		out = append(out, map[string]any{"op": "add", "path": "/metadata/annotations/" + strings.ReplaceAll(dispatch.QueueOfBindingAnnotation, "/", "~1"), "value": queue})
	}
	return out
}

// Handler is the webhook.
type Handler struct {
	// Reader reads templates from the Karmada API server.
	Reader client.Reader
	// Timeout bounds reading a template.
	Timeout time.Duration
}

var _ admission.Handler = &Handler{}

// Handle suspends the scheduling of a new binding of queued work.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	logger := klog.FromContext(ctx)
	if req.Operation != admissionv1.Create {
		return admission.Allowed("")
	}
	var rb workv1alpha2.ResourceBinding
	if err := json.Unmarshal(req.Object.Raw, &rb); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the binding: %w", err))
	}
	ref := rb.Spec.Resource
	w := Workload{APIVersion: ref.APIVersion, Kind: ref.Kind}
	obj, err := h.template(ctx, ref)
	if err != nil {
		logger.V(2).Info("Reading a binding's template failed", "binding", req.Namespace+"/"+req.Name, "template", ref.Kind+" "+ref.Namespace+"/"+ref.Name, "err", err)
	}
	w.Object = obj
	queue, queued := QueueOf(w)
	if !queued {
		if err != nil && !strings.HasPrefix(ref.APIVersion, "batch.volcano.sh/") {
			// Unknown whether it is queued: refuse for now; Karmada
			// creates the binding again.
			return admission.Errored(http.StatusServiceUnavailable, fmt.Errorf("reading %s %s/%s to see whether it is queued: %w", ref.Kind, ref.Namespace, ref.Name, err))
		}
		return admission.Allowed("not queued work")
	}
	patch := SuspendPatch(&rb, queue)
	if claims := h.claimsOf(ctx, ref); claims != "" && rb.Annotations[DataClaimsAnnotation] != claims {
		// The annotations exist by now: the queue's is added when none was.
		patch = append(patch, map[string]any{"op": "add", "path": "/metadata/annotations/" + strings.ReplaceAll(DataClaimsAnnotation, "/", "~1"), "value": claims})
	}
	if patch == nil {
		return admission.Allowed("scheduling already suspended")
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	pt := admissionv1.PatchTypeJSONPatch
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{
		Allowed: true, Patch: raw, PatchType: &pt,
		AuditAnnotations: map[string]string{"queue": queue},
	}}
}

// template reads the binding's template, nil when it does not exist (yet).
// claimsOf names the DataSourceClaims of the binding's namespace that
// refer to its workload, read live (a claim made just before the workload
// may not be in a cache yet); "" when there are none or they cannot be
// read.
func (h *Handler) claimsOf(ctx context.Context, ref workv1alpha2.ObjectReference) string {
	if h.Reader == nil {
		return ""
	}
	var l ddv1alpha1.DataSourceClaimList
	if err := h.Reader.List(ctx, &l, client.InNamespace(ref.Namespace)); err != nil {
		klog.FromContext(ctx).V(2).Info("Listing claims failed", "namespace", ref.Namespace, "err", err)
		return ""
	}
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	var names []string
	for _, c := range l.Items {
		w := c.Spec.Workload
		wgv, _ := schema.ParseGroupVersion(w.APIVersion)
		ns := w.Namespace
		if ns == "" {
			ns = c.Namespace
		}
		if wgv.Group == gv.Group && w.Kind == ref.Kind && w.Name == ref.Name && ns == ref.Namespace {
			names = append(names, c.Name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

func (h *Handler) template(ctx context.Context, ref workv1alpha2.ObjectReference) (*unstructured.Unstructured, error) {
	if h.Reader == nil {
		return nil, fmt.Errorf("no reader")
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(ref.APIVersion)
	obj.SetKind(ref.Kind)
	if err := h.Reader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, obj); err != nil {
		return nil, err
	}
	return obj, nil
}
