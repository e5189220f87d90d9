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

func TestDataSourceClaimDefault(t *testing.T) {
	got := testingdd.MakeDataSourceClaim("c", "ml", "amoro", "table", "db.t").Workload("batch.volcano.sh/v1alpha1", "Job", "", "train").Obj()
	if err := (webhook.DataSourceClaim).Default(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("ml", got.Spec.Workload.Namespace); diff != "" {
		t.Errorf("workload.namespace (-want,+got):\n%s", diff)
	}
}

func TestDataSourceClaimValidate(t *testing.T) {
	cases := map[string]struct {
		dsc  *ddv1alpha1.DataSourceClaim
		want []metav1.StatusCause
	}{
		"valid": {
			dsc: testingdd.MakeDataSourceClaim("c", "ml", "amoro", "table", "db.t").Workload("batch.volcano.sh/v1alpha1", "Job", "ml", "train").Obj(),
		},
		"workload in another namespace": {
			dsc: testingdd.MakeDataSourceClaim("c", "ml", "amoro", "table", "db.t").Workload("apps/v1", "Deployment", "prod", "web").Obj(),
			want: []metav1.StatusCause{wt.Cause(wt.Forbidden, "spec.workload.namespace",
				"Forbidden: a claim may only refer to a workload in its own namespace ml")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := webhook.DataSourceClaim
			_, err := w.ValidateCreate(t.Context(), tc.dsc)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate causes (-want,+got):\n%s", diff)
			}
			_, err = w.ValidateUpdate(t.Context(), tc.dsc, tc.dsc)
			if diff := cmp.Diff(tc.want, wt.Causes(t, err)); diff != "" {
				t.Errorf("ValidateUpdate causes (-want,+got):\n%s", diff)
			}
		})
	}
}
