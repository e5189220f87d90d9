package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caldera-sh/caldera/pkg/scheduler/config"
	"github.com/caldera-sh/caldera/pkg/scheduler/profile"
)

// TestPluginSnippets: every scheduler plugin entry the documentation shows
// on its own (a YAML block that starts with "- name:") loads, placed in a
// tier of a configuration of its format: Volcano's when it has
// "arguments", Caldera's otherwise.
func TestPluginSnippets(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no documentation pages: %v", err)
	}
	found := 0
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range yamlBlocks(string(raw)) {
			if !strings.HasPrefix(block, "- name: ") {
				continue
			}
			found++
			var doc strings.Builder
			if strings.Contains(block, "\n  arguments:") {
				doc.WriteString("actions: \"enqueue, allocate\"\n")
			} else {
				doc.WriteString("apiVersion: scheduler.config.caldera.sh/v1alpha1\nkind: SchedulerConfiguration\n")
			}
			doc.WriteString("tiers:\n- plugins:\n")
			for line := range strings.Lines(block) {
				doc.WriteString("  " + line)
			}
			if _, err := config.Load([]byte(doc.String()), profile.NameRegistry()); err != nil {
				t.Errorf("%s, YAML block %d:\n%s\ndoes not load: %v", filepath.Base(page), i+1, block, err)
			}
		}
	}
	if found < 5 {
		t.Errorf("found %d plugin snippets in docs/, want at least the 5 known", found)
	}
}

// yamlBlocks returns the contents of a Markdown page's ```yaml blocks.
func yamlBlocks(page string) []string {
	var blocks []string
	var cur *strings.Builder
	for line := range strings.Lines(page) {
		switch {
		case cur == nil && strings.TrimSpace(line) == "```yaml":
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	return blocks
}
