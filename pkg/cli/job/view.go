package job

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
)

func newView(f *cmdutil.Factory) *cobra.Command {
	var name, output string
	cmd := &cobra.Command{
		Use:               "view NAME",
		Short:             "Show one job: its tasks, pods, state and conditions",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: Completion(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := cmdutil.NameArg(args, name)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckOutput(output, "text", cmdutil.OutputYAML, cmdutil.OutputJSON); err != nil {
				return err
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			j, err := Get(cmdutil.Context(cmd), f, c, n)
			if err != nil {
				return err
			}
			if output != "text" {
				return f.PrintObjects(output, false, j)
			}
			w := tabwriter.NewWriter(f.Out, 0, 8, 2, ' ', 0)
			st := j.Status
			fmt.Fprintf(w, "Name:\t%s\n", j.Name)
			fmt.Fprintf(w, "Namespace:\t%s\n", j.Namespace)
			fmt.Fprintf(w, "Queue:\t%s\n", queueOf(j))
			fmt.Fprintf(w, "Scheduler:\t%s\n", cmdutil.Or(j.Spec.SchedulerName, "-"))
			fmt.Fprintf(w, "Priority class:\t%s\n", cmdutil.Or(j.Spec.PriorityClassName, "-"))
			fmt.Fprintf(w, "Created:\t%s ago\n", f.Age(j.CreationTimestamp.Time))
			phase := cmdutil.Or(string(st.State.Phase), "-")
			if st.State.Reason != "" || st.State.Message != "" {
				phase += " (" + strings.TrimSpace(st.State.Reason+" "+st.State.Message) + ")"
			}
			fmt.Fprintf(w, "Phase:\t%s\n", phase)
			fmt.Fprintf(w, "Min available:\t%d\n", j.Spec.MinAvailable)
			fmt.Fprintf(w, "Retries:\t%d of %d\n", st.RetryCount, j.Spec.MaxRetry)
			fmt.Fprintf(w, "Pods:\tpending %d, running %d, succeeded %d, failed %d, terminating %d, unknown %d\n",
				st.Pending, st.Running, st.Succeeded, st.Failed, st.Terminating, st.Unknown)
			fmt.Fprintln(w, "Tasks:")
			fmt.Fprintln(w, "  NAME\tREPLICAS\tMIN\tIMAGES\tREQUESTS")
			for _, t := range j.Spec.Tasks {
				min := "-"
				if t.MinAvailable != nil {
					min = fmt.Sprint(*t.MinAvailable)
				}
				var images, requests []string
				for _, c := range t.Template.Spec.Containers {
					images = append(images, c.Image)
					requests = append(requests, cmdutil.Resources(c.Resources.Requests))
				}
				fmt.Fprintf(w, "  %s\t%d\t%s\t%s\t%s\n", t.Name, t.Replicas, min, cmdutil.Or(strings.Join(images, ","), "-"), strings.Join(requests, " "))
			}
			if len(st.MemoryScaling) > 0 {
				fmt.Fprintln(w, "Memory raised after OOM kills:")
				fmt.Fprintln(w, "  TASK\tCONTAINER\tREQUEST\tLIMIT\tRAISES\tLAST")
				for _, m := range st.MemoryScaling {
					for _, c := range m.Containers {
						fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%d\t%s ago (pod %s)\n", m.Task, c.Name, quantityOr(c.Request), quantityOr(c.Limit),
							m.Steps, f.Age(m.LastTransitionTime.Time), m.LastPod)
					}
				}
			}
			if len(st.Conditions) > 0 {
				fmt.Fprintln(w, "Conditions:")
				for _, c := range st.Conditions {
					at := "-"
					if c.LastTransitionTime != nil {
						at = f.Age(c.LastTransitionTime.Time) + " ago"
					}
					fmt.Fprintf(w, "  %s\t%s\n", c.Status, at)
				}
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the job's name (or give it as the argument)")
	cmdutil.AddOutputFlag(cmd, &output, "text", cmdutil.OutputYAML, cmdutil.OutputJSON)
	return cmd
}

func quantityOr(q *resource.Quantity) string {
	if q == nil {
		return "-"
	}
	return q.String()
}
