//go:build integration

package apis

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const invalidDir = "testdata/invalid"

// TestInvalidObjectsAreRejected applies every manifest in testdata/invalid
// with `kubectl apply --server-side`; each must be rejected, with an error
// that contains the text its first line announces (`# expect: <text>`), so
// that the message names the field and the reason.
func TestInvalidObjectsAreRejected(t *testing.T) {
	files := yamlFiles(t, invalidDir)
	if len(files) == 0 {
		t.Fatalf("no invalid manifests under %s", invalidDir)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			want := expectation(t, file)
			_, stderr, err := fw.Kubectl(t.Context(), "apply", "--server-side", "--field-manager=invalid-test", "-f", file)
			if err == nil {
				t.Fatalf("kubectl apply accepted %s; want a rejection containing %q", file, want)
			}
			if !strings.Contains(stderr, want) {
				t.Errorf("rejection of %s does not contain %q:\n%s", file, want, stderr)
			}
		})
	}
}

func expectation(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	if !s.Scan() {
		t.Fatalf("%s is empty", file)
	}
	line := s.Text()
	const prefix = "# expect:"
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("%s: first line must be %q followed by the expected message, got %q", file, prefix, line)
	}
	want := strings.TrimSpace(strings.TrimPrefix(line, prefix))
	if want == "" {
		t.Fatalf("%s: empty expectation", file)
	}
	return want
}
