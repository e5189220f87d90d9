//go:build integration

package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/test/poll"
)

// TestQueueCommands: queues made with calderactl, listed as a table, JSON
// and YAML, shown as a tree by top, closed and opened through the
// controller manager's Command bus, and deleted; a name that is no
// queue's is an error listing the queues.
func TestQueueCommands(t *testing.T) {
	const gpu = corev1.ResourceName("nvidia.com/gpu")
	if got := must(t, "queue", "create", "research", "--weight", "3", "--capability", "cpu=64,nvidia.com/gpu=16", "--deserved", "cpu=32,nvidia.com/gpu=8", "--guarantee", "cpu=8"); got != "queue.scheduling.volcano.sh/research created\n" {
		t.Errorf("create: %q", got)
	}
	must(t, "queue", "create", "--name", "research-nlp", "--parent", "research", "--deserved", "nvidia.com/gpu=4", "--priority", "10")
	must(t, "queue", "create", "batch", "--weight", "1", "--capability", "cpu=16")
	if out, err := run(t, "queue", "create", "orphan", "--parent", "nowhere"); err == nil || !strings.Contains(err.Error(), `--parent: queue "nowhere" not found; the queues are: batch, default, research, research-nlp, root`) {
		t.Errorf("a parent that is no queue: %v %s", err, out)
	}
	if _, err := run(t, "queue", "create", "bad", "--capability", "cpu"); err == nil || err.Error() != `--capability "cpu": "cpu" is not name=quantity` {
		t.Errorf("a bad capability: %v", err)
	}
	// The controller manager opens new queues; the scheduler, absent here,
	// would count their jobs.
	poll.Eventually(t, t.Context(), 20*time.Second, "the new queues Open", func() (bool, string) {
		out := must(t, "queue", "list")
		return strings.Count(out, " Open ") == 5, out
	})
	// What the scheduler writes of the queues' use.
	for name, alloc := range map[string]corev1.ResourceList{
		"research":     {corev1.ResourceCPU: resource.MustParse("20"), gpu: resource.MustParse("6")},
		"research-nlp": {corev1.ResourceCPU: resource.MustParse("4"), gpu: resource.MustParse("4")},
	} {
		q := &schedulingv1beta1.Queue{}
		if err := fw.Client.Get(t.Context(), client.ObjectKey{Name: name}, q); err != nil {
			t.Fatal(err)
		}
		patched := q.DeepCopy()
		patched.Status.Allocated = alloc
		if err := fw.Client.Status().Patch(t.Context(), patched, client.MergeFrom(q)); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "queue-list", must(t, "queue", "list"))
	golden(t, "queue-list-wide", must(t, "queue", "list", "-o", "wide"))
	golden(t, "queue-top", must(t, "queue", "top"))
	golden(t, "queue-top-research", must(t, "queue", "top", "research"))

	var list struct {
		Kind  string                    `json:"kind"`
		Items []schedulingv1beta1.Queue `json:"items"`
	}
	if err := json.Unmarshal([]byte(must(t, "queue", "list", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "List" || len(list.Items) != 5 || list.Items[2].Name != "research" || list.Items[2].Kind != "Queue" || list.Items[2].Spec.Weight != 3 {
		t.Errorf("list -o json: %+v", list)
	}
	var q schedulingv1beta1.Queue
	if err := yaml.Unmarshal([]byte(must(t, "queue", "get", "research-nlp", "-o", "yaml")), &q); err != nil {
		t.Fatal(err)
	}
	if q.APIVersion != "scheduling.volcano.sh/v1beta1" || q.Spec.Parent != "research" || q.Spec.Priority != 10 {
		t.Errorf("get -o yaml: %+v", q)
	}

	// Close and open: Commands the controller manager executes.
	if got := must(t, "queue", "close", "batch"); got != "queue.scheduling.volcano.sh/batch: CloseQueue issued\n" {
		t.Errorf("close: %q", got)
	}
	state := func(name string) string {
		var q schedulingv1beta1.Queue
		if err := yaml.Unmarshal([]byte(must(t, "queue", "get", name, "-o", "yaml")), &q); err != nil {
			t.Fatal(err)
		}
		return string(q.Status.State)
	}
	poll.Eventually(t, t.Context(), 20*time.Second, "batch Closed", func() (bool, string) {
		s := state("batch")
		return s == "Closed", s
	})
	must(t, "queue", "operate", "batch", "--action", "open")
	poll.Eventually(t, t.Context(), 20*time.Second, "batch Open again", func() (bool, string) {
		s := state("batch")
		return s == "Open", s
	})
	if _, err := run(t, "queue", "operate", "batch", "--action", "pause"); err == nil || err.Error() != `--action "pause": not open or close` {
		t.Errorf("a bad action: %v", err)
	}

	if _, err := run(t, "queue", "get", "reserch"); err == nil || err.Error() != `queue "reserch" not found; the queues are: batch, default, research, research-nlp, root` {
		t.Errorf("an unknown queue: %v", err)
	}
	if _, err := run(t, "queue", "get", "a", "--name", "b"); err == nil || !strings.Contains(err.Error(), "the name is given twice") {
		t.Errorf("two names: %v", err)
	}
	if _, err := run(t, "queue", "list", "-o", "csv"); err == nil || err.Error() != `--output "csv": not one of table, wide, yaml, json` {
		t.Errorf("a bad output: %v", err)
	}
	if got := must(t, "queue", "delete", "research-nlp"); got != "queue.scheduling.volcano.sh/research-nlp deleted\n" {
		t.Errorf("delete: %q", got)
	}
}
