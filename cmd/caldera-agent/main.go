// Command caldera-agent runs on every node that colocates online and
// offline work: it classifies pods by QoS level, publishes the resources
// online pods leave unused as kubernetes.io/batch-cpu and
// kubernetes.io/batch-memory, sets the pods' cgroups, and evicts offline
// pods when the node is under pressure.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/caldera-sh/caldera/cmd/caldera-agent/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.NewAgentCommand(ctx).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
