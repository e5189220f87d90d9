//go:build integration

package cli

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
)

// TestDocsWalkthrough runs every `$ calderactl` line of the console blocks
// of docs/calderactl.md, then every `bin/calderactl` line of the "Run
// something" section of docs/getting-started.md, in order, in a namespace
// of their own; each must succeed.
func TestDocsWalkthrough(t *testing.T) {
	const ns = "cli-docs"
	if err := fw.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	// The queues the docs make go when the test ends: queues are not
	// namespaced, and other tests list them.
	var before schedulingv1beta1.QueueList
	if err := fw.Client.List(t.Context(), &before); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var after schedulingv1beta1.QueueList
		if err := fw.Client.List(context.Background(), &after); err != nil {
			t.Error(err)
			return
		}
		for _, q := range after.Items {
			if !slices.ContainsFunc(before.Items, func(b schedulingv1beta1.Queue) bool { return b.Name == q.Name }) {
				if err := fw.Client.Delete(context.Background(), &q); err != nil {
					t.Error(err)
				}
			}
		}
	})
	commands := docCommands(t, "../../../docs/calderactl.md", "", "$ calderactl ")
	if len(commands) < 10 {
		t.Fatalf("only %d commands in the calderactl walkthrough", len(commands))
	}
	started := docCommands(t, "../../../docs/getting-started.md", "## Run something", "bin/calderactl ")
	if len(started) < 4 {
		t.Fatalf("only %d commands in getting started", len(started))
	}
	for _, args := range append(commands, started...) {
		for i, a := range args {
			// Paths are the repository's.
			if strings.HasPrefix(a, "examples/") {
				args[i] = "../../../" + a
			}
		}
		if out, err := run(t, append([]string{"-n", ns}, args...)...); err != nil {
			t.Errorf("calderactl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// docCommands are the arguments of the lines starting with prefix in the
// code blocks of the file, from the heading from on ("" for all); a
// trailing "# comment" is dropped.
func docCommands(t *testing.T, path, from, prefix string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var commands [][]string
	inBlock, reading := false, from == ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !inBlock && strings.HasPrefix(line, "## "):
			if from != "" {
				reading = line == from
			}
		case strings.HasPrefix(line, "```console"), strings.HasPrefix(line, "```sh"):
			inBlock = true
		case strings.HasPrefix(line, "```"):
			inBlock = false
		case inBlock && reading && strings.HasPrefix(line, prefix):
			cmd, _, _ := strings.Cut(strings.TrimPrefix(line, prefix), " #")
			commands = append(commands, strings.Fields(cmd))
		}
	}
	return commands
}
