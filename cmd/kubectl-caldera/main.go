// Command kubectl-caldera is calderactl as a kubectl plugin: put it on the
// PATH and run `kubectl caldera ...`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/caldera-sh/caldera/cmd/calderactl/app"
	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.NewCommand(ctx, "kubectl caldera", cmdutil.NewFactory(os.Stdout)).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
