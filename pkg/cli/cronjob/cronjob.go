// Package cronjob is `calderactl cronjob`: create, list, view, suspend,
// resume and delete batch.volcano.sh CronJobs.
package cronjob

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	"github.com/caldera-sh/caldera/apis/batch/v1alpha1/validation"
	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
)

// NewCommand returns `cronjob`.
func NewCommand(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "cronjob",
		Aliases: []string{"cronjobs", "cronvcjob", "cronvj"},
		Short:   "Create, list, view, suspend, resume and delete cron jobs",
	}
	cmd.AddCommand(newCreate(f), newList(f), newView(f), newSuspend(f, true), newSuspend(f, false), newDelete(f))
	return cmd
}

func newCreate(f *cmdutil.Factory) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "create -f FILE",
		Short: "Create a cron job from a manifest",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return fmt.Errorf("-f FILE is required: a batch.volcano.sh/v1alpha1 CronJob manifest")
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			cj := &batchv1alpha1.CronJob{}
			if err := yaml.UnmarshalStrict(raw, cj); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if cj.Kind != "CronJob" || cj.APIVersion != batchv1alpha1.SchemeGroupVersion.String() {
				return fmt.Errorf("%s: a %s %s, not a %s CronJob", file, cj.APIVersion, cj.Kind, batchv1alpha1.SchemeGroupVersion)
			}
			if cj.Namespace == "" {
				if cj.Namespace, err = f.Namespace(); err != nil {
					return err
				}
			}
			// Checked here too, so that a mistake is said even where
			// admission is not installed.
			checked := cj.DeepCopy()
			batchv1alpha1.SetDefaults_CronJob(checked)
			if errs := validation.ValidateCronJob(checked); len(errs) > 0 {
				return apierrors.NewInvalid(batchv1alpha1.SchemeGroupVersion.WithKind("CronJob").GroupKind(), cj.Name, errs)
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			if err := c.Create(cmdutil.Context(cmd), cj); err != nil {
				return fmt.Errorf("creating cron job %s/%s: %w", cj.Namespace, cj.Name, err)
			}
			fmt.Fprintf(f.Out, "cronjob.batch.volcano.sh/%s created\n", cj.Name)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the CronJob manifest")
	return cmd
}

func newList(f *cmdutil.Factory) *cobra.Command {
	var all bool
	var output string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List cron jobs, with their next run",
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
			var l batchv1alpha1.CronJobList
			if err := c.List(cmdutil.Context(cmd), &l, opts...); err != nil {
				return fmt.Errorf("listing cron jobs: %w", err)
			}
			items := l.Items
			slices.SortFunc(items, func(a, b batchv1alpha1.CronJob) int {
				return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
			})
			if output != cmdutil.OutputTable {
				objs := make([]client.Object, len(items))
				for i := range items {
					objs[i] = &items[i]
				}
				return f.PrintObjects(output, true, objs...)
			}
			if len(items) == 0 {
				fmt.Fprintln(f.Out, "No cron jobs found.")
				return nil
			}
			headers := []string{"NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "NEXT", "AGE"}
			if all {
				headers = append([]string{"NAMESPACE"}, headers...)
			}
			var rows [][]string
			for i := range items {
				cj := &items[i]
				row := []string{cj.Name, cj.Spec.Schedule, cmdutil.Or(ptr.Deref(cj.Spec.TimeZone, ""), "-"), fmt.Sprint(ptr.Deref(cj.Spec.Suspend, false)),
					fmt.Sprint(len(cj.Status.Active)), lastSchedule(f, cj), next(f, cj), f.Age(cj.CreationTimestamp.Time)}
				if all {
					row = append([]string{cj.Namespace}, row...)
				}
				rows = append(rows, row)
			}
			return f.Table(headers, rows)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the cron jobs of every namespace")
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputTable, cmdutil.OutputYAML, cmdutil.OutputJSON)
	return cmd
}

func lastSchedule(f *cmdutil.Factory, cj *batchv1alpha1.CronJob) string {
	if t := cj.Status.LastScheduleTime; t != nil {
		return f.Age(t.Time) + " ago"
	}
	return "-"
}

// next says when the next run is due, or why none is.
func next(f *cmdutil.Factory, cj *batchv1alpha1.CronJob) string {
	if ptr.Deref(cj.Spec.Suspend, false) {
		return "suspended"
	}
	s, err := validation.ParseSchedule(cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, ""))
	if err != nil {
		return "invalid schedule"
	}
	now := f.Now()
	n := s.Next(now)
	if n.IsZero() {
		return "never"
	}
	return "in " + duration.HumanDuration(n.Sub(now))
}

func newView(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := cmdutil.Named(f, "view NAME", "Show a cron job: its schedule, its runs and their Jobs", "cron job", completion(f), func(ctx context.Context, c client.Client, name string) error {
		cj, err := get(ctx, f, c, name)
		if err != nil {
			return err
		}
		if output != cmdutil.OutputTable {
			return f.PrintObjects(output, false, cj)
		}
		var jobs batchv1alpha1.JobList
		if err := c.List(ctx, &jobs, client.InNamespace(cj.Namespace)); err != nil {
			return fmt.Errorf("listing jobs: %w", err)
		}
		fmt.Fprintf(f.Out, "Name:               %s\nNamespace:          %s\nSchedule:           %s\nTime zone:          %s\nConcurrency:        %s\nSuspend:            %t\nStarting deadline:  %s\nHistory:            %d completed, %d failed\nLast schedule:      %s\nLast success:       %s\nNext run:           %s\n",
			cj.Name, cj.Namespace, cj.Spec.Schedule, cmdutil.Or(ptr.Deref(cj.Spec.TimeZone, ""), "UTC"), cmdutil.Or(string(cj.Spec.ConcurrencyPolicy), string(batchv1alpha1.AllowConcurrent)),
			ptr.Deref(cj.Spec.Suspend, false), deadline(cj), ptr.Deref(cj.Spec.SuccessfulJobsHistoryLimit, batchv1alpha1.DefaultSuccessfulJobsHistoryLimit),
			ptr.Deref(cj.Spec.FailedJobsHistoryLimit, batchv1alpha1.DefaultFailedJobsHistoryLimit), timeOf(cj.Status.LastScheduleTime), timeOf(cj.Status.LastSuccessfulTime), next(f, cj))
		var rows [][]string
		for _, j := range jobs.Items {
			if ref := metav1.GetControllerOf(&j); ref == nil || ref.UID != cj.UID {
				continue
			}
			rows = append(rows, []string{"  " + j.Name, cmdutil.Or(string(j.Status.State.Phase), "-"), f.Age(j.CreationTimestamp.Time)})
		}
		if len(rows) == 0 {
			fmt.Fprintln(f.Out, "Jobs:               none")
			return nil
		}
		slices.SortFunc(rows, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
		fmt.Fprintln(f.Out, "Jobs:")
		return f.Table([]string{"  NAME", "PHASE", "AGE"}, rows)
	})
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputTable, cmdutil.OutputYAML, cmdutil.OutputJSON)
	return cmd
}

func deadline(cj *batchv1alpha1.CronJob) string {
	if d := cj.Spec.StartingDeadlineSeconds; d != nil {
		return (time.Duration(*d) * time.Second).String()
	}
	return "none"
}

func timeOf(t *metav1.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// newSuspend is suspend (stop new runs) or resume.
func newSuspend(f *cmdutil.Factory, suspend bool) *cobra.Command {
	verb, short, done := "suspend", "Stop a cron job's new runs (its Jobs keep running)", "suspended"
	if !suspend {
		verb, short, done = "resume", "Let a suspended cron job run again", "resumed"
	}
	return cmdutil.Named(f, verb+" NAME", short, "cron job", completion(f), func(ctx context.Context, c client.Client, name string) error {
		cj, err := get(ctx, f, c, name)
		if err != nil {
			return err
		}
		patch := client.MergeFrom(cj.DeepCopy())
		cj.Spec.Suspend = &suspend
		if err := c.Patch(ctx, cj, patch); err != nil {
			return fmt.Errorf("%s cron job %s/%s: %w", verb, cj.Namespace, cj.Name, err)
		}
		fmt.Fprintf(f.Out, "cronjob.batch.volcano.sh/%s %s\n", cj.Name, done)
		return nil
	})
}

func newDelete(f *cmdutil.Factory) *cobra.Command {
	return cmdutil.Named(f, "delete NAME", "Delete a cron job and the Jobs it created", "cron job", completion(f), func(ctx context.Context, c client.Client, name string) error {
		cj, err := get(ctx, f, c, name)
		if err != nil {
			return err
		}
		if err := c.Delete(ctx, cj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			return fmt.Errorf("deleting cron job %s/%s: %w", cj.Namespace, cj.Name, err)
		}
		fmt.Fprintf(f.Out, "cronjob.batch.volcano.sh/%s deleted\n", cj.Name)
		return nil
	})
}

// get reads a cron job of the current namespace; one that does not exist
// is an error naming those that do.
func get(ctx context.Context, f *cmdutil.Factory, c client.Client, name string) (*batchv1alpha1.CronJob, error) {
	ns, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	cj := &batchv1alpha1.CronJob{}
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cj)
	if apierrors.IsNotFound(err) {
		names, lerr := list(ctx, c, ns)
		if lerr != nil || len(names) == 0 {
			return nil, fmt.Errorf("cron job %q not found in namespace %s", name, ns)
		}
		return nil, fmt.Errorf("cron job %q not found in namespace %s; its cron jobs are: %s", name, ns, strings.Join(names, ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("reading cron job %s/%s: %w", ns, name, err)
	}
	return cj, nil
}

func list(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var l batchv1alpha1.CronJobList
	if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(l.Items))
	for _, cj := range l.Items {
		names = append(names, cj.Name)
	}
	slices.Sort(names)
	return names, nil
}

func completion(f *cmdutil.Factory) cobra.CompletionFunc {
	return cmdutil.Completion(f, func(ctx context.Context, c client.Client) ([]string, error) {
		ns, err := f.Namespace()
		if err != nil {
			return nil, err
		}
		return list(ctx, c, ns)
	})
}
