//go:build integration

package cli

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
)

// TestHyperJobCommands: the example HyperJob submitted, then given the
// status caldera-global writes, listed, viewed and explained. (The API
// server serves the HyperJob CRD, as a Karmada API server with Caldera's
// CRDs does; caldera-global does not run here.)
func TestHyperJobCommands(t *testing.T) {
	ctx := t.Context()
	const ns = "cli-hyperjobs"
	if err := fw.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "-n", ns, "hyperjob", "submit"); err == nil || !strings.Contains(err.Error(), "--filename is required") {
		t.Errorf("submit without a file: %v", err)
	}
	out := must(t, "-n", ns, "hyperjob", "submit", "-f", "../../../examples/training/hyperjob.yaml")
	name := strings.TrimSuffix(strings.TrimPrefix(out, "hyperjob.training.volcano.sh/"), " created\n")
	hj := &trainingv1alpha1.HyperJob{}
	if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, hj); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	hj.Status = trainingv1alpha1.HyperJobStatus{
		Phase: trainingv1alpha1.HyperJobPending, SplitCount: new(int32(2)),
		Conditions: []metav1.Condition{{Type: "Planned", Status: metav1.ConditionTrue, Reason: "Planned", Message: "2 child jobs", LastTransitionTime: metav1.NewTime(started)}},
		ReplicatedJobsStatus: []trainingv1alpha1.ReplicatedJobStatus{{
			Name:        hj.Spec.ReplicatedJobs[0].Name,
			JobClusters: map[string]string{name + "-a-0": "member-a", name + "-a-1": "member-b"},
			JobStates:   map[string]batchv1alpha1.JobState{name + "-a-0": {Phase: batchv1alpha1.JobRunning}},
			Running:     16, Pending: 16,
		}},
	}
	if err := fw.Client.Status().Update(ctx, hj); err != nil {
		t.Fatal(err)
	}
	golden(t, "hyperjob-list", must(t, "-n", ns, "hyperjob", "list"))
	golden(t, "hyperjob-view", must(t, "-n", ns, "hyperjob", "view", name))
	var list struct {
		Items []trainingv1alpha1.HyperJob `json:"items"`
	}
	if err := json.Unmarshal([]byte(must(t, "-n", ns, "hyperjob", "list", "-o", "json")), &list); err != nil || len(list.Items) != 1 || list.Items[0].Status.Phase != "Pending" {
		t.Errorf("list -o json: %+v %v", list, err)
	}
	out = must(t, "-n", ns, "explain", "hyperjob", name)
	for _, want := range []string{"is Pending.", "It is planned as 2 child jobs.", "in member-a (Running)", "in member-b (Pending); pods 16 pending, 16 running"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain hyperjob lacks %q:\n%s", want, out)
		}
	}
}
