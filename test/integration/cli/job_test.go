//go:build integration

package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/controllers/job/core"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestJobCommands: jobs run from flags and from an example file, listed,
// viewed, explained, suspended and resumed through the Command bus, and
// deleted. No scheduler runs: the jobs wait, and explain says so; a
// PodGroup given the scheduler's Unschedulable condition is explained with
// its numbers.
func TestJobCommands(t *testing.T) {
	ctx := t.Context()
	const ns = "cli-jobs"
	if err := fw.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if got := must(t, "-n", ns, "job", "run", "sleeper", "--image", "busybox:1.36", "--replicas", "4", "--min", "2", "--requests", "cpu=1,nvidia.com/gpu=1", "--limits", "nvidia.com/gpu=1", "--", "sleep", "60"); got != "job.batch.volcano.sh/sleeper created\n" {
		t.Errorf("run: %q", got)
	}
	var sleeper batchv1alpha1.Job
	if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sleeper"}, &sleeper); err != nil {
		t.Fatal(err)
	}
	task := sleeper.Spec.Tasks[0]
	if sleeper.Spec.MinAvailable != 2 || task.Replicas != 4 || task.MinAvailable == nil || *task.MinAvailable != 2 || task.Template.Spec.Containers[0].Image != "busybox:1.36" ||
		strings.Join(task.Template.Spec.Containers[0].Command, " ") != "sleep 60" || sleeper.Spec.SchedulerName != "volcano" {
		t.Errorf("the job run made: %+v", sleeper.Spec)
	}
	must(t, "-n", ns, "job", "run", "-f", "../../../examples/batch/tensorflow-ps-worker.yaml")
	if _, err := run(t, "-n", ns, "job", "run", "lost", "--queue", "nowhere"); err == nil || err.Error() != `the job's queue: queue "nowhere" not found; the queues are: default, root` && !strings.Contains(err.Error(), `queue "nowhere" not found; the queues are: `) {
		t.Errorf("a job of no queue: %v", err)
	}
	if _, err := run(t, "-n", ns, "job", "run", "wrong", "--replicas", "2", "--min", "3"); err == nil || err.Error() != "--min 3: must be between 1 and --replicas (2)" {
		t.Errorf("min over replicas: %v", err)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "both jobs Pending", func() (bool, string) {
		out := must(t, "-n", ns, "job", "list")
		return strings.Count(out, " Pending ") == 2, out
	})
	golden(t, "job-list", must(t, "-n", ns, "job", "list"))
	golden(t, "job-list-wide", must(t, "-n", ns, "job", "list", "-o", "wide"))
	golden(t, "job-view", must(t, "-n", ns, "job", "view", "tensorflow-dist-mnist"))
	// A job whose memory an OOM policy raised shows it.
	poll.Eventually(t, t.Context(), 30*time.Second, "sleeper's status with raised memory", func() (bool, string) {
		var j batchv1alpha1.Job
		if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sleeper"}, &j); err != nil {
			return false, err.Error()
		}
		req, lim := resource.MustParse("1536Mi"), resource.MustParse("3Gi")
		j.Status.MemoryScaling = []batchv1alpha1.TaskMemoryScaling{{Task: task.Name, Steps: 1, LastPod: "sleeper-" + task.Name + "-1", LastTransitionTime: metav1.NewTime(started),
			Containers: []batchv1alpha1.ContainerMemory{{Name: task.Template.Spec.Containers[0].Name, Request: &req, Limit: &lim}}}}
		if err := fw.Client.Status().Update(ctx, &j); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	if out := must(t, "-n", ns, "job", "view", "sleeper"); !strings.Contains(out, "Memory raised after OOM kills:") ||
		!regexp.MustCompile(task.Name+` +`+task.Template.Spec.Containers[0].Name+` +1536Mi +3Gi +1 +30h ago \(pod sleeper-`+task.Name+`-1\)`).MatchString(out) {
		t.Errorf("job view of a job with raised memory:\n%s", out)
	}
	if out := must(t, "job", "list", "-A", "--queue", "default"); !strings.Contains(out, "NAMESPACE") || !strings.Contains(out, "cli-jobs    sleeper") {
		t.Errorf("list -A:\n%s", out)
	}
	var list struct {
		Items []batchv1alpha1.Job `json:"items"`
	}
	if err := json.Unmarshal([]byte(must(t, "-n", ns, "job", "list", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 || list.Items[0].Name != "sleeper" || list.Items[1].Spec.MinAvailable != 3 {
		t.Errorf("list -o json: %d items", len(list.Items))
	}
	if _, err := run(t, "-n", ns, "job", "view", "sleepr"); err == nil || err.Error() != `job "sleepr" not found in namespace cli-jobs; its jobs are: sleeper, tensorflow-dist-mnist` {
		t.Errorf("an unknown job: %v", err)
	}
	if _, err := run(t, "-n", ns, "explain", "job", "sleepr"); err == nil || err.Error() != `job "sleepr" not found in namespace cli-jobs; its jobs are: sleeper, tensorflow-dist-mnist` {
		t.Errorf("explain of an unknown job: %v", err)
	}

	// Explain: no scheduler has admitted it.
	out := must(t, "-n", ns, "explain", "job", "sleeper")
	if !strings.Contains(out, "Job cli-jobs/sleeper is Pending") || !strings.Contains(out, "Of its 4 pods (2 needed to start), 0 are pending, 0 running") {
		t.Errorf("explain job:\n%s", out)
	}
	// The scheduler's view, as it writes it.
	pg := &schedulingv1beta1.PodGroup{}
	if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: core.PodGroupName(&sleeper)}, pg); err != nil {
		t.Fatal(err)
	}
	pg.Status.Conditions = []schedulingv1beta1.PodGroupCondition{{Type: schedulingv1beta1.PodGroupUnschedulableType, Status: corev1.ConditionTrue,
		Reason: "NotEnoughResources", Message: "1 of 2 tasks placeable; 3 nodes: 3 Insufficient nvidia.com/gpu", LastTransitionTime: metav1.NewTime(started)}}
	pg.Status.Phase = schedulingv1beta1.PodGroupInqueue
	if err := fw.Client.Status().Update(ctx, pg); err != nil {
		t.Fatal(err)
	}
	out = must(t, "-n", ns, "explain", "job", "sleeper")
	if !strings.Contains(out, "The scheduler cannot place it (NotEnoughResources, for 30h): 1 of 2 tasks placeable; 3 nodes: 3 Insufficient nvidia.com/gpu.") {
		t.Errorf("explain job with the scheduler's condition:\n%s", out)
	}
	out = must(t, "-n", ns, "explain", "podgroup", pg.Name)
	if !strings.Contains(out, "is Inqueue, in queue default; it needs 2 pods placed together.") {
		t.Errorf("explain podgroup:\n%s", out)
	}
	if _, err := run(t, "explain", "deployment", "x"); err == nil || err.Error() != `cannot explain "deployment": give job, podgroup or hyperjob` {
		t.Errorf("explain of another kind: %v", err)
	}

	// Suspend and resume.
	if got := must(t, "-n", ns, "job", "suspend", "sleeper"); got != "job.batch.volcano.sh/sleeper: AbortJob issued\n" {
		t.Errorf("suspend: %q", got)
	}
	phase := func() string {
		var j batchv1alpha1.Job
		if err := fw.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sleeper"}, &j); err != nil {
			return err.Error()
		}
		return string(j.Status.State.Phase)
	}
	poll.Eventually(t, t.Context(), 30*time.Second, "sleeper Aborted", func() (bool, string) {
		p := phase()
		return p == "Aborted", p
	})
	must(t, "-n", ns, "job", "resume", "--name", "sleeper")
	poll.Eventually(t, t.Context(), 30*time.Second, "sleeper resumed", func() (bool, string) {
		p := phase()
		return p == "Pending" || p == "Restarting", p
	})
	if got := must(t, "-n", ns, "job", "delete", "sleeper"); got != "job.batch.volcano.sh/sleeper deleted\n" {
		t.Errorf("delete: %q", got)
	}
}

// TestVersion: version names the Go toolchain; -o json parses. This test
// binary records no revision, and version says why; calderactl as make
// build builds it names the revision of the checkout.
func TestVersion(t *testing.T) {
	if out := must(t, "version"); !strings.HasPrefix(out, "calderactl ") || !strings.Contains(out, "go1.") ||
		!strings.Contains(out, "no VCS revision recorded") {
		t.Errorf("version: %q", out)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(must(t, "version", "-o", "json")), &v); err != nil || v["goVersion"] == nil {
		t.Errorf("version -o json: %v %v", v, err)
	}

	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout git can read: %v", err)
	}
	// go build records the revision only where .git is a directory: not in
	// a git worktree, whose .git is a file.
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		t.Skipf("%s/.git is not a directory (a git worktree?): go build records no revision there", root)
	}
	// The go build command of make build, for calderactl alone.
	dir := t.TempDir()
	dry, err := exec.Command("make", "-s", "-n", "-C", root, "build", "BIN="+dir).Output()
	if err != nil {
		t.Fatalf("make -n build: %v", err)
	}
	var build []string
	for _, line := range strings.Split(string(dry), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "go" && f[1] == "build" {
			build = f[1:]
		}
	}
	if i := slices.Index(build, "./cmd/..."); i >= 0 {
		build[i] = "./cmd/calderactl"
	} else {
		t.Fatalf("make build runs no go build of ./cmd/...:\n%s", dry)
	}
	cmd := exec.Command("go", build...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(build, " "), err, out)
	}
	out, err := exec.Command(filepath.Join(dir, "calderactl"), "version").Output()
	if rev := strings.TrimSpace(string(head))[:12]; err != nil || !strings.Contains(string(out), "(revision "+rev+", committed ") {
		t.Errorf("calderactl built as make build builds it, version: %q %v; want revision %s", out, err, rev)
	}
}
