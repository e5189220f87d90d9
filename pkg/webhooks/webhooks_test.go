package webhooks_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	testingbatch "github.com/caldera-sh/caldera/apis/batch/v1alpha1/testing"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	testingsched "github.com/caldera-sh/caldera/apis/scheduling/v1beta1/testing"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
	"github.com/caldera-sh/caldera/pkg/webhooks"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

func hooks(t *testing.T) []webhooks.Webhook {
	return webhooks.New(webhooks.Config{
		Scheme: wt.Scheme(t),
		Reader: wt.Reader(t,
			testingsched.MakeQueue("root").Obj(),
			testingsched.MakeQueue("default").State(schedulingv1beta1.QueueStateOpen).Obj()),
		SchedulerNames: []string{"volcano", "caldera"},
	})
}

func TestFailurePolicies(t *testing.T) {
	type policy struct {
		Path            string
		Mutating        bool
		FailurePolicy   admissionregistrationv1.FailurePolicyType
		TimeoutSeconds  int32
		ExcludeSystem   bool
		MatchConditions []admissionregistrationv1.MatchCondition
	}
	var got []policy
	for _, h := range hooks(t) {
		got = append(got, policy{h.Path, h.Mutating, h.FailurePolicy, h.TimeoutSeconds, h.ExcludeSystemNamespaces, h.MatchConditions})
	}
	crd := func(path string, mutating bool) policy {
		return policy{Path: path, Mutating: mutating, FailurePolicy: admissionregistrationv1.Fail, TimeoutSeconds: 10}
	}
	want := []policy{
		crd("/jobs/mutate", true), crd("/cronjobs/mutate", true), crd("/jobflows/mutate", true), crd("/jobtemplates/mutate", true), crd("/podgroups/mutate", true), crd("/queues/mutate", true),
		crd("/hyperjobs/mutate", true), crd("/datasources/mutate", true), crd("/datasourceclaims/mutate", true),
		crd("/jobs/validate", false), crd("/cronjobs/validate", false), crd("/jobflows/validate", false), crd("/jobtemplates/validate", false), crd("/podgroups/validate", false), crd("/queues/validate", false),
		crd("/hypernodes/validate", false), crd("/hyperjobs/validate", false), crd("/datasources/validate", false),
		crd("/datasourceclaims/validate", false), crd("/commands/validate", false),
		{
			Path: "/pods/validate", FailurePolicy: admissionregistrationv1.Ignore, TimeoutSeconds: 5, ExcludeSystem: true,
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "caldera-scheduler",
				Expression: `has(object.spec.schedulerName) && object.spec.schedulerName in ["volcano", "caldera"]`,
			}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("webhooks (-want,+got):\n%s", diff)
	}
}

// review sends one admission request through the webhook at path, as the
// API server does.
func review(t *testing.T, path string, req admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	var handler http.Handler
	for _, h := range hooks(t) {
		if h.Path == path {
			handler = h.Handler
		}
	}
	if handler == nil {
		t.Fatalf("no webhook at %s", path)
	}
	req.UID = "uid-1"
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &req,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, r)
	var resp admissionv1.AdmissionReview
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatalf("decoding the review %s: %v", w.Body.String(), err)
	}
	if resp.Response == nil || resp.Response.UID != "uid-1" {
		t.Fatalf("response does not answer the request: %s", w.Body.String())
	}
	return resp.Response
}

func raw(t *testing.T, obj runtime.Object) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

func TestJobDefaultsArePatched(t *testing.T) {
	j := testingbatch.MakeJob("j", "ns").Task(testingbatch.MakeTask("", 2)).Obj()
	resp := review(t, "/jobs/mutate", admissionv1.AdmissionRequest{
		Kind:      metav1.GroupVersionKind{Group: "batch.volcano.sh", Version: "v1alpha1", Kind: "Job"},
		Operation: admissionv1.Create,
		Namespace: "ns",
		Object:    raw(t, j),
	})
	if !resp.Allowed || resp.PatchType == nil {
		t.Fatalf("mutation allowed=%v patchType=%v, want an allowed JSON patch", resp.Allowed, resp.PatchType)
	}
	var patch []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if err := json.Unmarshal(resp.Patch, &patch); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, p := range patch {
		got[p.Op+" "+p.Path] = p.Value
	}
	want := map[string]any{
		"add /spec/tasks/0/name":         "default0",
		"add /spec/tasks/0/minAvailable": float64(2),
		"add /spec/minAvailable":         float64(2),
		"add /spec/queue":                "default",
	}
	for k, v := range want {
		if diff := cmp.Diff(v, got[k]); diff != "" {
			t.Errorf("patch %s (-want,+got):\n%s", k, diff)
		}
	}
}

func TestQueueRefusalCarriesTheFields(t *testing.T) {
	resp := review(t, "/queues/validate", admissionv1.AdmissionRequest{
		Kind:      metav1.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "Queue"},
		Operation: admissionv1.Delete,
		Name:      "root",
		OldObject: raw(t, testingsched.MakeQueue("root").Obj()),
	})
	if resp.Allowed {
		t.Fatal("deleting the root queue was allowed")
	}
	if resp.Result.Code != http.StatusUnprocessableEntity || resp.Result.Reason != metav1.StatusReasonInvalid {
		t.Errorf("result code %d reason %s, want 422 Invalid", resp.Result.Code, resp.Result.Reason)
	}
	want := []metav1.StatusCause{wt.Cause(wt.Forbidden, "metadata.name", `Forbidden: the "root" queue cannot be deleted`)}
	if diff := cmp.Diff(want, resp.Result.Details.Causes); diff != "" {
		t.Errorf("causes (-want,+got):\n%s", diff)
	}
}

func TestPodsOfOtherSchedulersPass(t *testing.T) {
	pod := st.MakePod("ns", "p").SchedulerName("default-scheduler").Annotation(schedulingv1beta1.QueueNameAnnotation, "nope").Obj()
	resp := review(t, "/pods/validate", admissionv1.AdmissionRequest{
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Operation: admissionv1.Create,
		Namespace: "ns",
		Object:    raw(t, pod),
	})
	if !resp.Allowed {
		t.Errorf("pod of another scheduler refused: %v", resp.Result)
	}
}
