//go:build integration

package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/caldera-sh/caldera/test/poll"
)

// TestJobFlowCommands: the example pipeline's templates and flow are
// created, the controller manager starts its first Job, the flow is listed
// and viewed with what each step waits for, and both are deleted.
func TestJobFlowCommands(t *testing.T) {
	const ns = "cli-flow"
	if err := fw.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	const example = "../../../examples/flow/pipeline.yaml"
	if out := must(t, "-n", ns, "jobtemplate", "create", "-f", example); strings.Count(out, "created") != 4 {
		t.Errorf("jobtemplate create: %q", out)
	}
	if out := must(t, "-n", ns, "jobflow", "create", "-f", example); out != "jobflow.flow.volcano.sh/pipeline created\n" {
		t.Errorf("jobflow create: %q", out)
	}
	if out := must(t, "-n", ns, "jobtemplate", "list"); !regexp.MustCompile(`(?m)^train +worker=2 +2 +default `).MatchString(out) {
		t.Errorf("jobtemplate list:\n%s", out)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "the pipeline running its first step", func() (bool, string) {
		out := must(t, "-n", ns, "jobflow", "list")
		return regexp.MustCompile(`(?m)^pipeline +Running +4 +`).MatchString(out), out
	})
	view := must(t, "-n", ns, "jobflow", "view", "pipeline")
	for _, want := range []string{"Phase:       Running", "Retain:      retain", "prep       -                pipeline-prep", "report     train,baseline   pipeline-report     not started   -"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	if _, err := run(t, "-n", ns, "jobflow", "describe", "pipe"); err == nil || err.Error() != `job flow "pipe" not found in namespace cli-flow; its job flows are: pipeline` {
		t.Errorf("describe of a missing flow: %v", err)
	}
	if out := must(t, "-n", ns, "jobtemplate", "view", "train"); !strings.Contains(out, "kind: JobTemplate") || !strings.Contains(out, "name: worker") {
		t.Errorf("jobtemplate view:\n%s", out)
	}
	must(t, "-n", ns, "jobflow", "delete", "pipeline")
	if out := must(t, "-n", ns, "jobtemplate", "delete", "report"); out != "jobtemplate.flow.volcano.sh/report deleted\n" {
		t.Errorf("jobtemplate delete: %q", out)
	}
}
