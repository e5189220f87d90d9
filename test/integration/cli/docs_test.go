//go:build integration

package cli

import (
	"bufio"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDocsWalkthrough runs every `$ calderactl` line of the console blocks
// of docs/calderactl.md, in order, in a namespace of its own; each must
// succeed.
func TestDocsWalkthrough(t *testing.T) {
	const ns = "cli-docs"
	if err := fw.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../../../docs/calderactl.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var commands [][]string
	inConsole := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```console"):
			inConsole = true
		case strings.HasPrefix(line, "```"):
			inConsole = false
		case inConsole && strings.HasPrefix(line, "$ calderactl "):
			commands = append(commands, strings.Fields(strings.TrimPrefix(line, "$ calderactl ")))
		}
	}
	if len(commands) < 10 {
		t.Fatalf("only %d commands in the walkthrough", len(commands))
	}
	for _, args := range commands {
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
