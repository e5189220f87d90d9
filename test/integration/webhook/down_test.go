//go:build integration

package webhook

import (
	"strings"
	"testing"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	st "github.com/caldera-sh/caldera/pkg/scheduler/testing"
)

// TestWebhookDown checks the failure policies: with the webhook stopped,
// Caldera's objects are refused (Fail) while pods are still created
// (Ignore), even pods the webhook would refuse.
func TestWebhookDown(t *testing.T) {
	fixtures(t)
	webhookDown(t)
	defer webhookUp(t)

	err := fw.Client.Create(t.Context(), job("while-down").Obj())
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Errorf("creating a job without the webhook: got %v, want a failed webhook call", err)
	}
	pod := st.MakePod(ns, "while-down").Annotation(schedulingv1beta1.QueueNameAnnotation, "closed-q").Obj()
	if err := fw.Client.Create(t.Context(), pod); err != nil {
		t.Errorf("creating a pod without the webhook: %v", err)
	}
}
