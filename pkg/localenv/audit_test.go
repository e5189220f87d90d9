package localenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummarizeAudit(t *testing.T) {
	const sa = "system:serviceaccount:caldera-system:caldera-scheduler"
	log := `{"kind":"Event","verb":"create","user":{"username":"` + sa + `"},"objectRef":{"resource":"pods","namespace":"a","name":"p1","apiVersion":"v1","subresource":"binding"},"responseStatus":{"code":201}}
{"kind":"Event","verb":"create","user":{"username":"` + sa + `"},"objectRef":{"resource":"pods","namespace":"a","name":"p2","apiVersion":"v1","subresource":"binding"},"responseStatus":{"code":201}}
{"kind":"Event","verb":"create","user":{"username":"` + sa + `"},"objectRef":{"resource":"pods","namespace":"a","name":"p1","apiVersion":"v1","subresource":"binding"},"responseStatus":{"code":409}}
{"kind":"Event","verb":"update","user":{"username":"` + sa + `"},"objectRef":{"resource":"leases","namespace":"caldera-system","name":"caldera-scheduler","apiGroup":"coordination.k8s.io","apiVersion":"v1"},"responseStatus":{"code":403}}
{"kind":"Event","verb":"get","user":{"username":"` + sa + `"},"requestURI":"/api","responseStatus":{"code":200}}
`
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := SummarizeAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Usage{
		{User: sa, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "caldera-system", Names: []string{"caldera-scheduler"}, Denied: 1},
		{User: sa, Verb: "create", Resource: "pods", Subresource: "binding", Namespace: "a", Names: []string{"p1", "p2"}, Allowed: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SummarizeAudit (-want +got):\n%s", diff)
	}
}
