// Command calderactl is Caldera's command line.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	// CronJob time zones need the IANA database even where the image
	// has none.
	_ "time/tzdata"

	"github.com/caldera-sh/caldera/cmd/calderactl/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.NewCalderactlCommand(ctx, os.Stdout).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
