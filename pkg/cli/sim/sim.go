// Package sim implements `calderactl sim`: run a scenario through the
// simulator (the scheduler's own cycles, on a simulated clock) and report
// what happened.
package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
	"github.com/caldera-sh/caldera/pkg/sim/scenario"
)

// NewCommand returns `sim`.
func NewCommand(out io.Writer) *cobra.Command {
	var jobs, report, output string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "sim SCENARIO",
		Short: "Run a scenario through the simulator: the real scheduler on simulated nodes and a simulated clock",
		Long: `Run a scenario (docs/simulator.md): its cluster, queues, scheduler
configuration and workload (generated jobs, or a trace such as the Alibaba
2023 GPU trace) go through the scheduler's own cache, cycles, actions and
plugins on a simulated clock, with no API server. The same scenario gives
the same result. It prints per-queue waits and completions, utilization per
resource and GPU model, and fairness; --jobs writes a record per job,
--report an HTML report with plots.`,
		Example: "  calderactl sim pkg/sim/scenario/testdata/gangs.yaml --jobs jobs.csv --report report.html",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, "text", cmdutil.OutputJSON); err != nil {
				return err
			}
			s, err := scenario.Load(args[0])
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("seed") {
				s.Seed = seed
			}
			if os.Getenv("GOGC") == "" {
				debug.SetGCPercent(scenario.GCPercent)
			}
			r, err := scenario.Run(cmdutil.Context(cmd), s)
			if err != nil {
				return err
			}
			if jobs != "" {
				f, err := os.Create(jobs)
				if err != nil {
					return err
				}
				if err := scenario.WriteJobs(f, r); err != nil {
					_ = f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
			}
			sum := scenario.Summarize(r)
			if report != "" {
				f, err := os.Create(report)
				if err != nil {
					return err
				}
				if err := scenario.WriteHTML(f, r, sum); err != nil {
					_ = f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
			}
			if output == cmdutil.OutputJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(sum)
			}
			scenario.WriteText(out, sum)
			if jobs != "" {
				fmt.Fprintf(out, "  jobs written to %s\n", jobs)
			}
			if report != "" {
				fmt.Fprintf(out, "  report written to %s: open it in a browser\n", report)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&jobs, "jobs", "", "write a record per job (CSV) to this file")
	cmd.Flags().StringVar(&report, "report", "", "write an HTML report with plots (allocation over time, jobs waiting, waits per queue, GPU models) to this file")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "use this seed instead of the scenario's (generated workloads and sampled traces change with it)")
	cmdutil.AddOutputFlag(cmd, &output, "text", cmdutil.OutputJSON)
	return cmd
}
