package v1alpha1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	ddtesting "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/testing"
)

func TestSetDefaults_DataSource(t *testing.T) {
	cases := map[string]struct {
		in   *ddv1alpha1.DataSource
		want *ddv1alpha1.DataSource
	}{
		"reclaim policy unset": {
			in:   ddtesting.MakeDataSource("ds", "amoro", "table", "a.b.c").Obj(),
			want: ddtesting.MakeDataSource("ds", "amoro", "table", "a.b.c").ReclaimPolicy(ddv1alpha1.ReclaimPolicyRetain).Obj(),
		},
		"reclaim policy set": {
			in:   ddtesting.MakeDataSource("ds", "amoro", "table", "a.b.c").ReclaimPolicy(ddv1alpha1.ReclaimPolicyDelete).Obj(),
			want: ddtesting.MakeDataSource("ds", "amoro", "table", "a.b.c").ReclaimPolicy(ddv1alpha1.ReclaimPolicyDelete).Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			ddv1alpha1.SetDefaults_DataSource(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SetDefaults_DataSource() (-want,+got):\n%s", diff)
			}
			again := got.DeepCopy()
			ddv1alpha1.SetDefaults_DataSource(again)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("SetDefaults_DataSource() is not idempotent (-first,+second):\n%s", diff)
			}
		})
	}
}

func TestSetDefaults_DataSourceClaim(t *testing.T) {
	cases := map[string]struct {
		in   *ddv1alpha1.DataSourceClaim
		want *ddv1alpha1.DataSourceClaim
	}{
		"workload namespace unset": {
			in: ddtesting.MakeDataSourceClaim("c", "ml", "amoro", "table", "a.b.c").
				Workload("apps/v1", "Deployment", "", "serve").Obj(),
			want: ddtesting.MakeDataSourceClaim("c", "ml", "amoro", "table", "a.b.c").
				Workload("apps/v1", "Deployment", "ml", "serve").Obj(),
		},
		"workload namespace set is kept, even when wrong": {
			in: ddtesting.MakeDataSourceClaim("c", "ml", "amoro", "table", "a.b.c").
				Workload("apps/v1", "Deployment", "other", "serve").Obj(),
			want: ddtesting.MakeDataSourceClaim("c", "ml", "amoro", "table", "a.b.c").
				Workload("apps/v1", "Deployment", "other", "serve").Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			ddv1alpha1.SetDefaults_DataSourceClaim(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SetDefaults_DataSourceClaim() (-want,+got):\n%s", diff)
			}
			again := got.DeepCopy()
			ddv1alpha1.SetDefaults_DataSourceClaim(again)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("SetDefaults_DataSourceClaim() is not idempotent (-first,+second):\n%s", diff)
			}
		})
	}
}
