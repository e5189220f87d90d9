// Package hyperjob implements `calderactl hyperjob`: submit, list and view
// HyperJobs on the Karmada API server.
package hyperjob

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
)

// NewCommand returns the `hyperjob` command group.
func NewCommand(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "hyperjob",
		Aliases: []string{"hyperjobs", "hj"},
		Short:   "Submit, list and view HyperJobs (against the Karmada API server)",
	}
	cmd.AddCommand(newSubmit(f), newList(f), newView(f))
	return cmd
}

func newSubmit(f *cmdutil.Factory) *cobra.Command {
	var filename, output string
	cmd := &cobra.Command{
		Use:     "submit -f FILE",
		Short:   "Submit the HyperJob of a YAML file",
		Example: "  calderactl --kubeconfig karmada.config hyperjob submit -f examples/federation/hyperjob-llm.yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if filename == "" {
				return fmt.Errorf("--filename is required: the YAML file of a HyperJob")
			}
			if err := cmdutil.CheckOutput(output, "name", cmdutil.OutputYAML, cmdutil.OutputJSON); err != nil {
				return err
			}
			raw, err := os.ReadFile(filename)
			if err != nil {
				return err
			}
			hj := &trainingv1alpha1.HyperJob{}
			if err := yaml.UnmarshalStrict(raw, hj); err != nil {
				return fmt.Errorf("%s: %w", filename, err)
			}
			if hj.Kind != "" && hj.Kind != "HyperJob" {
				return fmt.Errorf("%s: a %s, not a HyperJob", filename, hj.Kind)
			}
			if hj.Namespace == "" {
				if hj.Namespace, err = f.Namespace(); err != nil {
					return err
				}
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			if err := c.Create(cmdutil.Context(cmd), hj); err != nil {
				if meta.IsNoMatchError(err) {
					return fmt.Errorf("this API server serves no HyperJobs: point --kubeconfig at the Karmada API server (%w)", err)
				}
				return fmt.Errorf("submitting HyperJob %s/%s: %w", hj.Namespace, hj.Name, err)
			}
			if output != "name" {
				return f.PrintObjects(output, false, hj)
			}
			fmt.Fprintf(f.Out, "hyperjob.training.volcano.sh/%s created\n", hj.Name)
			return nil
		},
	}
	cmd.Flags().StringVarP(&filename, "filename", "f", "", "the YAML file of a HyperJob")
	cmdutil.AddOutputFlag(cmd, &output, "name", cmdutil.OutputYAML, cmdutil.OutputJSON)
	return cmd
}

func newList(f *cmdutil.Factory) *cobra.Command {
	var output string
	var all bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List HyperJobs",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cmdutil.CheckOutput(output, cmdutil.OutputTable, cmdutil.OutputYAML, cmdutil.OutputJSON); err != nil {
				return err
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			opts, err := f.InNamespace(all)
			if err != nil {
				return err
			}
			var l trainingv1alpha1.HyperJobList
			if err := c.List(cmdutil.Context(cmd), &l, opts...); err != nil {
				if meta.IsNoMatchError(err) {
					return fmt.Errorf("this API server serves no HyperJobs: point --kubeconfig at the Karmada API server (%w)", err)
				}
				return fmt.Errorf("listing HyperJobs: %w", err)
			}
			slices.SortFunc(l.Items, func(a, b trainingv1alpha1.HyperJob) int {
				return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
			})
			if output != cmdutil.OutputTable {
				objs := make([]client.Object, len(l.Items))
				for i := range l.Items {
					objs[i] = &l.Items[i]
				}
				return f.PrintObjects(output, true, objs...)
			}
			if len(l.Items) == 0 {
				fmt.Fprintln(f.Out, "No HyperJobs found.")
				return nil
			}
			headers := []string{"NAME", "PHASE", "CHILDREN", "CLUSTERS", "RUNNING", "SUCCEEDED", "FAILED", "RETRIES", "AGE"}
			if all {
				headers = append([]string{"NAMESPACE"}, headers...)
			}
			var rows [][]string
			for _, hj := range l.Items {
				children, clusters, running, succeeded, failed := 0, map[string]bool{}, int32(0), int32(0), int32(0)
				for _, rs := range hj.Status.ReplicatedJobsStatus {
					children += len(rs.JobClusters)
					for _, c := range rs.JobClusters {
						clusters[c] = true
					}
					running, succeeded, failed = running+rs.Running, succeeded+rs.Succeeded, failed+rs.Failed
				}
				names := make([]string, 0, len(clusters))
				for c := range clusters {
					names = append(names, c)
				}
				slices.Sort(names)
				row := []string{hj.Name, cmdutil.Or(string(hj.Status.Phase), "Pending"), strconv.Itoa(children), cmdutil.Or(strings.Join(names, ","), "-"),
					strconv.Itoa(int(running)), strconv.Itoa(int(succeeded)), strconv.Itoa(int(failed)), strconv.Itoa(int(hj.Status.RetryCount)), f.Age(hj.CreationTimestamp.Time)}
				if all {
					row = append([]string{hj.Namespace}, row...)
				}
				rows = append(rows, row)
			}
			return f.Table(headers, rows)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the HyperJobs of every namespace")
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputTable, cmdutil.OutputYAML, cmdutil.OutputJSON)
	return cmd
}

func newView(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "view NAME",
		Short: "Show one HyperJob: its plan, children and their clusters",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, "text", cmdutil.OutputYAML, cmdutil.OutputJSON); err != nil {
				return err
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			ns, err := f.Namespace()
			if err != nil {
				return err
			}
			hj := &trainingv1alpha1.HyperJob{}
			if err := c.Get(cmdutil.Context(cmd), client.ObjectKey{Namespace: ns, Name: args[0]}, hj); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("HyperJob %q not found in namespace %s", args[0], ns)
				}
				return fmt.Errorf("reading HyperJob %s/%s: %w", ns, args[0], err)
			}
			if output != "text" {
				return f.PrintObjects(output, false, hj)
			}
			w := tabwriter.NewWriter(f.Out, 0, 8, 2, ' ', 0)
			fmt.Fprintf(w, "Name:\t%s\n", hj.Name)
			fmt.Fprintf(w, "Namespace:\t%s\n", hj.Namespace)
			fmt.Fprintf(w, "Phase:\t%s\n", cmdutil.Or(string(hj.Status.Phase), "Pending"))
			fmt.Fprintf(w, "Created:\t%s ago\n", f.Age(hj.CreationTimestamp.Time))
			if hj.Spec.MinAvailable != nil {
				fmt.Fprintf(w, "Min available:\t%d children\n", *hj.Spec.MinAvailable)
			}
			if hj.Spec.MaxDomains != nil {
				fmt.Fprintf(w, "Max domains:\t%d clusters\n", *hj.Spec.MaxDomains)
			}
			fmt.Fprintf(w, "Retries:\t%d\n", hj.Status.RetryCount)
			if len(hj.Status.Conditions) > 0 {
				fmt.Fprintln(w, "Conditions:")
				for _, c := range hj.Status.Conditions {
					fmt.Fprintf(w, "  %s=%s\t%s\t%s\n", c.Type, c.Status, c.Reason, c.Message)
				}
			}
			fmt.Fprintln(w, "Children:")
			fmt.Fprintln(w, "  REPLICATED JOB\tCHILD\tCLUSTER\tPHASE")
			for _, rs := range hj.Status.ReplicatedJobsStatus {
				names := make([]string, 0, len(rs.JobClusters))
				for n := range rs.JobClusters {
					names = append(names, n)
				}
				slices.Sort(names)
				for _, n := range names {
					fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", rs.Name, n, rs.JobClusters[n], cmdutil.Or(string(rs.JobStates[n].Phase), "-"))
				}
			}
			return w.Flush()
		},
	}
	cmdutil.AddOutputFlag(cmd, &output, "text", cmdutil.OutputYAML, cmdutil.OutputJSON)
	return cmd
}
