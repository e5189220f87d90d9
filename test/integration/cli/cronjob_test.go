//go:build integration

package cli

import (
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCronJobCommands: the example cron job is created, listed with its
// next run, viewed, suspended and resumed, and deleted; a name that does
// not exist is answered with those that do.
func TestCronJobCommands(t *testing.T) {
	ctx := t.Context()
	const ns = "cli-cron"
	if err := fw.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if out := must(t, "-n", ns, "cronjob", "create", "-f", "../../../examples/batch/cronjob-nightly.yaml"); out != "cronjob.batch.volcano.sh/nightly-training created\n" {
		t.Errorf("create: %q", out)
	}
	// The next run is hours, minutes or seconds away, depending on the
	// time of day the test's clock (start + 30.5 h) reads.
	if out := must(t, "-n", ns, "cronjob", "list"); !regexp.MustCompile(`(?m)^nightly-training +0 2 \* \* \* +Europe/Berlin +false +0 +- +in (\d+[hms])+ `).MatchString(out) {
		t.Errorf("list:\n%s", out)
	}
	view := must(t, "-n", ns, "cronjob", "view", "nightly-training")
	for _, want := range []string{"Schedule:           0 2 * * *", "Time zone:          Europe/Berlin", "Concurrency:        Forbid",
		"Starting deadline:  1h0m0s", "History:            3 completed, 1 failed", "Last schedule:      never", "Jobs:               none"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	if out := must(t, "-n", ns, "cronjob", "suspend", "nightly-training"); out != "cronjob.batch.volcano.sh/nightly-training suspended\n" {
		t.Errorf("suspend: %q", out)
	}
	if out := must(t, "-n", ns, "cronjob", "list"); !regexp.MustCompile(`(?m)^nightly-training .* true +0 +- +suspended `).MatchString(out) {
		t.Errorf("list after suspend:\n%s", out)
	}
	must(t, "-n", ns, "cronjob", "resume", "nightly-training")
	if _, err := run(t, "-n", ns, "cronjob", "view", "nightly"); err == nil || err.Error() != `cron job "nightly" not found in namespace cli-cron; its cron jobs are: nightly-training` {
		t.Errorf("view of a missing cron job: %v", err)
	}
	if _, err := run(t, "-n", ns, "cronjob", "create", "-f", "testdata/cronjob-bad-schedule.yaml"); err == nil || !strings.Contains(err.Error(), `spec.schedule: Invalid value: "0 25 * * *": end of range (25) above maximum (23): 25`) {
		t.Errorf("a bad schedule: %v", err)
	}
	if out := must(t, "-n", ns, "cronjob", "delete", "nightly-training"); out != "cronjob.batch.volcano.sh/nightly-training deleted\n" {
		t.Errorf("delete: %q", out)
	}
}
