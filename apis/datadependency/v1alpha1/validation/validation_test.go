package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	ddtesting "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/testing"
)

// ignoreDetail compares errors by type and field only, so that the tests do
// not pin the wording of messages.
var ignoreDetail = cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail", "Origin", "CoveredByDeclarative")

func TestValidateDataSourceClaim(t *testing.T) {
	workload := field.NewPath("spec", "workload")
	cases := map[string]struct {
		dsc  *ddv1alpha1.DataSourceClaim
		want field.ErrorList
	}{
		"job in the claim's namespace, namespace implied": {
			dsc: ddtesting.MakeDataSourceClaim("train", "ml", "amoro", "table", "dc1.ml.training").Obj(),
		},
		"deployment in the claim's namespace, namespace explicit": {
			dsc: ddtesting.MakeDataSourceClaim("train", "ml", "amoro", "table", "dc1.ml.training").
				Workload("apps/v1", "Deployment", "ml", "serve").Obj(),
		},
		"workload in another namespace": {
			dsc: ddtesting.MakeDataSourceClaim("train", "ml", "amoro", "table", "dc1.ml.training").
				Workload("apps/v1", "Deployment", "kube-system", "serve").Obj(),
			want: field.ErrorList{field.Forbidden(workload.Child("namespace"), "")},
		},
		"apiVersion without a version": {
			dsc: ddtesting.MakeDataSourceClaim("train", "ml", "amoro", "table", "dc1.ml.training").
				Workload("", "Deployment", "", "serve").Obj(),
			want: field.ErrorList{field.Invalid(workload.Child("apiVersion"), nil, "")},
		},
		"apiVersion with too many parts": {
			dsc: ddtesting.MakeDataSourceClaim("train", "ml", "amoro", "table", "dc1.ml.training").
				Workload("apps/v1/beta", "Deployment", "", "serve").Obj(),
			want: field.ErrorList{field.Invalid(workload.Child("apiVersion"), nil, "")},
		},
		"workload name no object can have": {
			dsc: ddtesting.MakeDataSourceClaim("train", "ml", "amoro", "table", "dc1.ml.training").
				Workload("apps/v1", "Deployment", "", "Serve_1").Obj(),
			want: field.ErrorList{field.Invalid(workload.Child("name"), nil, "")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ValidateDataSourceClaim(tc.dsc)
			if diff := cmp.Diff(tc.want, got, ignoreDetail, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ValidateDataSourceClaim() errors (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateDataSource(t *testing.T) {
	names := field.NewPath("spec", "locality", "clusterNames")
	cases := map[string]struct {
		ds   *ddv1alpha1.DataSource
		want field.ErrorList
	}{
		"local to two clusters": {
			ds: ddtesting.MakeDataSource("dc1-ml-training", "amoro", "table", "dc1.ml.training").
				Clusters("cluster-us-west", "cluster-us-east").Obj(),
		},
		"local to no cluster yet": {
			ds: ddtesting.MakeDataSource("dc1-ml-training", "amoro", "table", "dc1.ml.training").Obj(),
		},
		"cluster name no cluster can have": {
			ds: ddtesting.MakeDataSource("dc1-ml-training", "amoro", "table", "dc1.ml.training").
				Clusters("cluster-us-west", "US West").Obj(),
			want: field.ErrorList{field.Invalid(names.Index(1), nil, "")},
		},
		"no locality": {
			ds:   ddtesting.MakeDataSource("dc1-ml-training", "amoro", "table", "dc1.ml.training").NoLocality().Obj(),
			want: field.ErrorList{field.Required(field.NewPath("spec", "locality"), "")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ValidateDataSource(tc.ds)
			if diff := cmp.Diff(tc.want, got, ignoreDetail, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ValidateDataSource() errors (-want,+got):\n%s", diff)
			}
		})
	}
}
