// Command caldera-global is Caldera's layer on a Karmada control plane: it
// holds new ResourceBindings of queued work back from Karmada's scheduler
// (a mutating webhook) and releases them by queue priority, weighted fair
// share, capability and the member clusters' free capacity (the
// dispatcher).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/caldera-sh/caldera/cmd/caldera-global/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.NewGlobalCommand(ctx).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
