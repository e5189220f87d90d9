// Package app assembles the calderactl command.
package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
	"github.com/caldera-sh/caldera/pkg/cli/cronjob"
	"github.com/caldera-sh/caldera/pkg/cli/dashboard"
	"github.com/caldera-sh/caldera/pkg/cli/explain"
	"github.com/caldera-sh/caldera/pkg/cli/hyperjob"
	"github.com/caldera-sh/caldera/pkg/cli/job"
	"github.com/caldera-sh/caldera/pkg/cli/jobflow"
	"github.com/caldera-sh/caldera/pkg/cli/local"
	"github.com/caldera-sh/caldera/pkg/cli/queue"
	"github.com/caldera-sh/caldera/pkg/cli/sim"
	"github.com/caldera-sh/caldera/pkg/version"
)

// NewCalderactlCommand returns the root command of calderactl; use is its
// name ("calderactl", or "kubectl caldera" as a kubectl plugin).
func NewCalderactlCommand(ctx context.Context, out io.Writer) *cobra.Command {
	return NewCommand(ctx, "calderactl", cmdutil.NewFactory(out))
}

// NewCommand returns the root command under the name use, its commands
// working through f.
func NewCommand(ctx context.Context, use string, f *cmdutil.Factory) *cobra.Command {
	out := f.Out
	cmd := &cobra.Command{
		Use:           use,
		Short:         "Caldera: batch and AI scheduling for Kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetContext(ctx)
	cmd.SetOut(out)
	f.AddFlags(cmd)
	cmd.AddGroup(&cobra.Group{ID: "work", Title: "Work:"}, &cobra.Group{ID: "env", Title: "Environment:"})
	for _, c := range []*cobra.Command{job.NewCommand(f), cronjob.NewCommand(f), jobflow.NewFlowCommand(f), jobflow.NewTemplateCommand(f), queue.NewCommand(f), hyperjob.NewCommand(f), explain.NewCommand(f), dashboard.NewCommand(f)} {
		c.GroupID = "work"
		cmd.AddCommand(c)
	}
	l := local.NewCommand(ctx, out)
	l.GroupID = "env"
	sc := sim.NewCommand(out)
	sc.GroupID = "env"
	cmd.AddCommand(l, sc, newVersion(out))
	return cmd
}

func newVersion(out io.Writer) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print calderactl's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := version.Get()
			switch output {
			case "":
				fmt.Fprintln(out, "calderactl", v.String())
			case cmdutil.OutputJSON:
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			default:
				return fmt.Errorf("--output %q: not json", output)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json for the build's details as JSON")
	return cmd
}
