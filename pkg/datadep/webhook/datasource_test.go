package webhook_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	testingdd "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/testing"
	"github.com/caldera-sh/caldera/pkg/datadep/webhook"
	wt "github.com/caldera-sh/caldera/pkg/webhooks/testing"
)

func TestDataSourceDefault(t *testing.T) {
	got := testingdd.MakeDataSource("ds", "amoro", "table", "db.t").Clusters("east").ReclaimPolicy("").Obj()
	if err := (webhook.DataSource).Default(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ddv1alpha1.ReclaimPolicyRetain, got.Spec.ReclaimPolicy); diff != "" {
		t.Errorf("reclaimPolicy (-want,+got):\n%s", diff)
	}
}

func TestDataSourceValidate(t *testing.T) {
	cases := map[string]struct {
		ds   *ddv1alpha1.DataSource
		want []metav1.StatusCause
	}{
		"valid": {ds: testingdd.MakeDataSource("ds", "amoro", "table", "db.t").Clusters("east", "west").Obj()},
		"cluster name no cluster can have": {
			ds: testingdd.MakeDataSource("ds", "amoro", "table", "db.t").Clusters("East_1").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Invalid, "spec.locality.clusterNames[0]",
				`Invalid value: "East_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := webhook.DataSource
			_, err := w.ValidateCreate(t.Context(), tc.ds)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate causes (-want,+got):\n%s", diff)
			}
			_, err = w.ValidateUpdate(t.Context(), tc.ds, tc.ds)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateUpdate causes (-want,+got):\n%s", diff)
			}
		})
	}
}
