// Command caldera-webhook serves Caldera's admission webhooks: defaulting
// and validation of Jobs, PodGroups, Queues, HyperNodes, HyperJobs,
// DataSources, DataSourceClaims and Commands, and the queue check of pods.
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

	"github.com/caldera-sh/caldera/cmd/caldera-webhook/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.NewWebhookCommand(ctx).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
