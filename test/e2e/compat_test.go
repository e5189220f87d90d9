//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caldera-sh/caldera/test/poll"
)

// expectation is a corpus file's first line: "# expect: runs" or
// "# expect: refused FIELD TEXT".
type expectation struct {
	refused     bool
	field, text string
}

func readExpectation(t *testing.T, path string) expectation {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	rest, ok := strings.CutPrefix(first, "# expect: ")
	switch {
	case ok && rest == "runs":
		return expectation{}
	case ok && strings.HasPrefix(rest, "refused "):
		field, text, _ := strings.Cut(strings.TrimPrefix(rest, "refused "), " ")
		if field != "" && text != "" {
			return expectation{refused: true, field: field, text: text}
		}
	}
	t.Fatalf("%s: first line %q is neither \"# expect: runs\" nor \"# expect: refused FIELD TEXT\"", path, first)
	return expectation{}
}

// TestCompatibilityCorpus applies every manifest of test/compat, each in a
// namespace of its own, on the local environment (`make run`'s) through
// the real webhooks and controllers, and checks that each is refused with
// its field and reason or is admitted and runs (see test/compat/README.md).
func TestCompatibilityCorpus(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	env := startLocal(ctx, t)
	defer env.down(ctx, t)

	files, err := filepath.Glob("../compat/*.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("corpus files: %v %v", files, err)
	}
	// objects maps a namespace to the objects applied into it (kubectl's
	// "-o name" form).
	objects := map[string][]string{}
	for _, f := range files {
		want := readExpectation(t, f)
		ns := "compat-" + strings.TrimSuffix(filepath.Base(f), ".yaml")
		if out, err := env.kubectl(ctx, "create", "namespace", ns); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		out, err := env.kubectl(ctx, "apply", "--server-side", "-n", ns, "-f", f, "-o", "name")
		switch {
		case want.refused && err == nil:
			t.Errorf("%s: admitted, want refused at %s with %q:\n%s", f, want.field, want.text, out)
		case want.refused && (!strings.Contains(out, want.field) || !strings.Contains(out, want.text)):
			t.Errorf("%s: refused without naming %s and %q:\n%s", f, want.field, want.text, out)
		case !want.refused && err != nil:
			t.Errorf("%s: refused, want it to run: %v\n%s", f, err, out)
		case !want.refused:
			objects[ns] = strings.Fields(out)
		}
	}

	// Every object of the admitted files reaches its working state.
	poll.Eventually(t, ctx, 150*time.Second, "every admitted object running", func() (bool, string) {
		var waiting []string
		for _, ns := range slices.Sorted(maps.Keys(objects)) {
			for _, w := range notRunning(ctx, t, env, ns, objects[ns]) {
				waiting = append(waiting, ns+": "+w)
			}
		}
		if len(waiting) == 0 {
			return true, ""
		}
		return false, fmt.Sprintf("\n  %s\ncontroller manager log:\n%s", strings.Join(waiting, "\n  "),
			tail(readFile(filepath.Join(env.dir, "caldera-controller-manager.log")), 30))
	})
}

// object is what notRunning reads of an object.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Replicas  *int32 `json:"replicas"`
		MinMember int32  `json:"minMember"`
	} `json:"spec"`
	Status struct {
		Phase            string          `json:"phase"`
		State            json.RawMessage `json:"state"`
		ReadyReplicas    int32           `json:"readyReplicas"`
		LastScheduleTime string          `json:"lastScheduleTime"`
	} `json:"status"`
}

// notRunning lists the objects of a namespace not yet in their working
// state, each with what it is in.
func notRunning(ctx context.Context, t *testing.T, env *localEnv, ns string, names []string) []string {
	t.Helper()
	out, err := env.kubectl(ctx, append([]string{"get", "-n", ns, "-o", "json"}, names...)...)
	if err != nil {
		return []string{fmt.Sprintf("kubectl get: %v: %s", err, out)}
	}
	// One name gets the object, more a List.
	var list struct {
		Kind  string
		Items []object
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if list.Kind != "List" {
		var o object
		if err := json.Unmarshal([]byte(out), &o); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		list.Items = []object{o}
	}
	var podGroups []object
	var waiting []string
	for _, o := range list.Items {
		var state struct {
			Phase string `json:"phase"`
		}
		var queueState string
		_ = json.Unmarshal(o.Status.State, &state)
		_ = json.Unmarshal(o.Status.State, &queueState)
		ok, is := true, ""
		switch o.Kind {
		case "Job":
			ok, is = state.Phase == "Running" || state.Phase == "Completed", state.Phase
		case "CronJob":
			ok, is = o.Status.LastScheduleTime != "", "never scheduled"
		case "JobFlow":
			ok, is = state.Phase == "Running" || state.Phase == "Succeed", state.Phase
		case "Queue":
			ok, is = queueState == "Open", queueState
		case "PodGroup":
			ok, is = o.Status.Phase == "Running", o.Status.Phase
		case "Pod":
			ok, is = o.Status.Phase == "Running", o.Status.Phase
		case "Deployment", "StatefulSet", "ReplicaSet":
			ok, is = o.Spec.Replicas != nil && o.Status.ReadyReplicas == *o.Spec.Replicas, fmt.Sprintf("%d ready", o.Status.ReadyReplicas)
			if m := o.Metadata.Annotations["scheduling.volcano.sh/group-min-member"]; ok && m != "" {
				if podGroups == nil {
					podGroups = listPodGroups(ctx, t, env, ns)
				}
				ok, is = false, "no PodGroup of minMember "+m
				for _, pg := range podGroups {
					if fmt.Sprint(pg.Spec.MinMember) == m && pg.Status.Phase == "Running" {
						ok = true
					}
				}
			}
		}
		if !ok {
			waiting = append(waiting, fmt.Sprintf("%s %s: %s", o.Kind, o.Metadata.Name, is))
		}
	}
	if len(list.Items) != len(names) {
		waiting = append(waiting, fmt.Sprintf("%d of %d objects found", len(list.Items), len(names)))
	}
	return waiting
}

func listPodGroups(ctx context.Context, t *testing.T, env *localEnv, ns string) []object {
	t.Helper()
	out, err := env.kubectl(ctx, "get", "podgroups", "-n", ns, "-o", "json")
	if err != nil {
		return []object{}
	}
	var list struct{ Items []object }
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return list.Items
}
