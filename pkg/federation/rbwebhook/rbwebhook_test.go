package rbwebhook

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
)

func obj(apiVersion, kind string, labels, annotations map[string]string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": spec}}
	u.SetName("w")
	u.SetNamespace("ns")
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	return u
}

func TestQueueOf(t *testing.T) {
	for name, tc := range map[string]struct {
		w      Workload
		queue  string
		queued bool
	}{
		"Volcano Job with a queue": {w: Workload{"batch.volcano.sh/v1alpha1", "Job", obj("batch.volcano.sh/v1alpha1", "Job", nil, nil, map[string]any{"queue": "research"})}, queue: "research", queued: true},
		"Volcano Job without one":  {w: Workload{"batch.volcano.sh/v1alpha1", "Job", obj("batch.volcano.sh/v1alpha1", "Job", nil, nil, map[string]any{})}, queue: "default", queued: true},
		"Volcano Job not readable": {w: Workload{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job"}, queue: "default", queued: true},
		"Deployment with the queue label": {w: Workload{"apps/v1", "Deployment", obj("apps/v1", "Deployment", map[string]string{QueueLabel: "web"}, nil, nil)},
			queue: "web", queued: true},
		"StatefulSet with the queue on its pods": {w: Workload{"apps/v1", "StatefulSet", obj("apps/v1", "StatefulSet", nil, nil, map[string]any{
			"template": map[string]any{"metadata": map[string]any{"annotations": map[string]any{QueueAnnotation: "db"}}}})}, queue: "db", queued: true},
		"pods of a PodGroup": {w: Workload{"v1", "Pod", obj("v1", "Pod", nil, map[string]string{GroupNameAnnotation: "pg"}, nil)}, queue: "default", queued: true},
		"plain Deployment":   {w: Workload{"apps/v1", "Deployment", obj("apps/v1", "Deployment", nil, nil, nil)}},
		"a Queue itself":     {w: Workload{"scheduling.volcano.sh/v1beta1", "Queue", obj("scheduling.volcano.sh/v1beta1", "Queue", nil, nil, nil)}},
	} {
		t.Run(name, func(t *testing.T) {
			q, ok := QueueOf(tc.w)
			if q != tc.queue || ok != tc.queued {
				t.Errorf("QueueOf = %q, %v; want %q, %v", q, ok, tc.queue, tc.queued)
			}
		})
	}
}

func TestHandle(t *testing.T) {
	s := runtime.NewScheme()
	_ = appsv1.AddToScheme(s)
	_ = corev1.AddToScheme(s)
	queued := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Labels: map[string]string{QueueLabel: "online"}}}
	plain := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "plain"}}
	h := &Handler{Reader: fake.NewClientBuilder().WithScheme(s).WithObjects(queued, plain).Build()}
	yes := true
	for name, tc := range map[string]struct {
		spec        workv1alpha2.ResourceBindingSpec
		annotations map[string]string
		op          admissionv1.Operation
		patch       string
		allowed     bool
		code        int32
	}{
		"a Job's binding is suspended": {
			spec:  workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Namespace: "ns", Name: "train"}},
			patch: `[{"op":"add","path":"/spec/suspension","value":{"scheduling":true}},{"op":"add","path":"/metadata/annotations","value":{"dispatch.caldera.sh/queue":"default"}}]`, allowed: true,
		},
		"a user's dispatching suspension is kept": {
			spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"},
				Suspension: &workv1alpha2.Suspension{Dispatching: &yes}},
			patch: `[{"op":"add","path":"/spec/suspension/scheduling","value":true},{"op":"add","path":"/metadata/annotations","value":{"dispatch.caldera.sh/queue":"online"}}]`, allowed: true,
		},
		"annotations kept, the queue added": {
			spec:        workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Namespace: "ns", Name: "train"}},
			annotations: map[string]string{"team": "ml"},
			patch:       `[{"op":"add","path":"/spec/suspension","value":{"scheduling":true}},{"op":"add","path":"/metadata/annotations/dispatch.caldera.sh~1queue","value":"default"}]`, allowed: true,
		},
		"not queued": {
			spec:    workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "plain"}},
			allowed: true,
		},
		"template not there yet: refused for now": {
			spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "gone"}},
			code: http.StatusServiceUnavailable,
		},
		"updates are left alone": {
			spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Namespace: "ns", Name: "train"}},
			op:   admissionv1.Update, allowed: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			raw, _ := json.Marshal(&workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}, Spec: tc.spec})
			op := tc.op
			if op == "" {
				op = admissionv1.Create
			}
			resp := h.Handle(t.Context(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: op, Namespace: "ns", Name: "b", Object: runtime.RawExtension{Raw: raw},
			}})
			if resp.Allowed != tc.allowed {
				t.Errorf("allowed %v, want %v (%+v)", resp.Allowed, tc.allowed, resp.Result)
			}
			if tc.code != 0 && (resp.Result == nil || resp.Result.Code != tc.code) {
				t.Errorf("result %+v, want code %d", resp.Result, tc.code)
			}
			if diff := cmp.Diff(tc.patch, string(resp.Patch)); diff != "" {
				t.Errorf("patch (-want,+got):\n%s", diff)
			}
		})
	}
}
