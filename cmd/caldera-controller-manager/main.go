// Command caldera-controller-manager runs Caldera's controllers: Jobs,
// PodGroups for every workload, Queues, the Command bus and garbage
// collection.
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

	"github.com/caldera-sh/caldera/cmd/caldera-controller-manager/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.NewControllerManagerCommand(ctx).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
