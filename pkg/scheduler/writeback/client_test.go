package writeback

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// TestPlainPatch: a status patch goes to the object's status subresource
// with the patch's content type, and an error answered is decoded (a
// PodGroup gone is NotFound, which the writer drops rather than retries).
func TestPlainPatch(t *testing.T) {
	var gotPath, gotType, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		gotPath, gotType = r.URL.Path, r.Header.Get("Content-Type")
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(rw, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"podgroups.scheduling.volcano.sh \"pg\" not found"}`)
	}))
	defer srv.Close()
	c, err := NewStatusClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(c, nil)
	err = w.patchStatus(t.Context(), podGroupStatus("ns", "pg"), map[string]any{"phase": "Running"})
	if !apierrors.IsNotFound(err) {
		t.Errorf("error = %v, want NotFound", err)
	}
	if want := "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg/status"; gotPath != want {
		t.Errorf("path = %q, want %q", gotPath, want)
	}
	if gotType != string(types.MergePatchType) || gotBody != `{"status":{"phase":"Running"}}` {
		t.Errorf("sent %s %s", gotType, gotBody)
	}
}
