// Package app assembles the calderactl command.
package app

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/caldera-sh/caldera/pkg/cli/local"
)

// NewCalderactlCommand returns the root command of calderactl.
func NewCalderactlCommand(ctx context.Context, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:           "calderactl",
		Short:         "Caldera: batch and AI scheduling for Kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(out)
	cmd.AddCommand(local.NewCommand(ctx, out))
	return cmd
}
