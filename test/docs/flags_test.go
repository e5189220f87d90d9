// Package docs checks documentation against the code: the flags
// reference (docs/reference/flags.md) is what the components' commands
// declare (go test ./test/docs -update rewrites it), and the scheduler
// plugin entries the pages show load.
package docs

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	agent "github.com/caldera-sh/caldera/cmd/caldera-agent/app"
	cm "github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app"
	global "github.com/caldera-sh/caldera/cmd/caldera-global/app"
	scheduler "github.com/caldera-sh/caldera/cmd/caldera-scheduler/app"
	webhook "github.com/caldera-sh/caldera/cmd/caldera-webhook/app"
)

var update = flag.Bool("update", false, "rewrite docs/reference/flags.md")

const path = "../../docs/reference/flags.md"

// klogFlags are klog's, the same in every component: listed once.
var klogFlags = map[string]bool{}

func init() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	fs.VisitAll(func(f *flag.Flag) { klogFlags[f.Name] = true })
}

func render() string {
	ctx := context.Background()
	var b strings.Builder
	b.WriteString(`# Flags of every component

Generated from the components' commands by ` + "`go test ./test/docs -update`" + `;
a test fails when this page and the code differ. Every component also
takes klog's flags (` + "`-v`" + `, ` + "`--vmodule`" + `, ` + "`--logtostderr`" + `, ...).
calderactl's commands are in [calderactl](../calderactl.md).
`)
	for _, c := range []struct {
		name string
		cmd  *cobra.Command
		doc  string
	}{
		{"caldera-scheduler", scheduler.NewSchedulerCommand(ctx), "the rest of its configuration is its file: [scheduler configuration](../scheduler-configuration.md)"},
		{"caldera-controller-manager", cm.NewControllerManagerCommand(ctx), ""},
		{"caldera-webhook", webhook.NewWebhookCommand(ctx), "[webhooks](../webhooks.md)"},
		{"caldera-agent", agent.NewAgentCommand(ctx), "the colocation settings are its ConfigMap: [colocation](../colocation.md)"},
		{"caldera-global", global.NewGlobalCommand(ctx), "[federation](../federation.md)"},
	} {
		fmt.Fprintf(&b, "\n## %s\n\n", c.name)
		if c.doc != "" {
			fmt.Fprintf(&b, "%s%s.\n\n", strings.ToUpper(c.doc[:1]), c.doc[1:])
		}
		b.WriteString("| Flag | Default | Meaning |\n| --- | --- | --- |\n")
		c.cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if klogFlags[f.Name] || f.Name == "help" || f.Hidden {
				return
			}
			def := f.DefValue
			switch {
			case def == "" || def == "[]":
				def = ""
			default:
				def = "`" + def + "`"
			}
			usage := strings.ReplaceAll(f.Usage, "|", "\\|")
			fmt.Fprintf(&b, "| `--%s` | %s | %s |\n", f.Name, def, usage)
		})
	}
	return b.String()
}

// TestFlagsReference: docs/reference/flags.md lists every flag of every
// component with its default and meaning.
func TestFlagsReference(t *testing.T) {
	got := render()
	if *update {
		if err := os.MkdirAll("../../docs/reference", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./test/docs -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("docs/reference/flags.md is stale (go test ./test/docs -update; -want,+got):\n%s", diff)
	}
}
