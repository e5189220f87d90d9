package datadep

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
)

func TestConstraintOf(t *testing.T) {
	created := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	claim := func(phase ddv1alpha1.DataSourceClaimPhase, placement ddv1alpha1.DataPlacement, fallback ddv1alpha1.DataFallback) *ddv1alpha1.DataSourceClaim {
		return &ddv1alpha1.DataSourceClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "events", CreationTimestamp: metav1.NewTime(created)},
			Spec: ddv1alpha1.DataSourceClaimSpec{System: "amoro", DataSourceType: "table", DataSourceName: "lake.events",
				Placement: placement, Fallback: fallback, ResolutionTimeoutSeconds: new(int32(60))},
			Status: ddv1alpha1.DataSourceClaimStatus{Phase: phase, ResolvedClusterNames: []string{"member-b"},
				Conditions: []metav1.Condition{{Type: ddv1alpha1.DataSourceClaimReady, Status: metav1.ConditionFalse, Message: "provider amoro answered 503."}}},
		}
	}
	if c := ConstraintOf(claim(ddv1alpha1.DataSourceClaimBound, ddv1alpha1.DataPlacementRequired, ""), created); len(c.Required) != 1 || c.Blocked != nil {
		t.Errorf("bound, required: %+v", c)
	}
	if c := ConstraintOf(claim(ddv1alpha1.DataSourceClaimBound, ddv1alpha1.DataPlacementPreferred, ""), created); c.Required != nil || len(c.Preferred) != 1 {
		t.Errorf("bound, preferred: %+v", c)
	}
	c := ConstraintOf(claim(ddv1alpha1.DataSourceClaimPending, "", ddv1alpha1.DataFallbackAnywhere), created.Add(30*time.Second))
	want := `claim events waits for the location of amoro table "lake.events" (provider amoro answered 503); until 2026-12-01T12:01:00Z, then fallback Anywhere`
	if c.Blocked == nil || c.Blocked.Message != want {
		t.Errorf("pending within the timeout: %+v", c.Blocked)
	}
	if c := ConstraintOf(claim(ddv1alpha1.DataSourceClaimPending, "", ddv1alpha1.DataFallbackAnywhere), created.Add(time.Minute)); c.Blocked != nil || c.Required != nil {
		t.Errorf("pending past the timeout, fallback Anywhere: %+v", c)
	}
	if c := ConstraintOf(claim(ddv1alpha1.DataSourceClaimPending, "", ""), created.Add(time.Hour)); c.Blocked == nil {
		t.Errorf("pending past the timeout, fallback Hold (the default): %+v", c)
	}
	if got := WorkloadKey(&ddv1alpha1.DataSourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ml"}, Spec: ddv1alpha1.DataSourceClaimSpec{
		Workload: ddv1alpha1.WorkloadRef{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "train"}}}); got != Key("batch.volcano.sh/v1beta9", "Job", "ml", "train") {
		t.Errorf("the key of a workload depends on its version: %s", got)
	}
}
