// Package job implements `calderactl job`: the Volcano Job verbs a vcctl
// user knows (run, list, view, suspend, resume, delete).
package job

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
	"github.com/caldera-sh/caldera/pkg/cli/queue"
)

// NewCommand returns the `job` command group.
func NewCommand(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "job",
		Aliases: []string{"jobs", "vcjob"},
		Short:   "Run, list, view, suspend, resume and delete Volcano Jobs",
	}
	cmd.AddCommand(newRun(f), newList(f), newView(f),
		newCommand(f, "suspend", busv1alpha1.AbortJobAction, "Suspend a job: its pods are deleted, the job is Aborted until resumed",
			"the job is Aborted", batchv1alpha1.JobAborted, aborted),
		newCommand(f, "resume", busv1alpha1.ResumeJobAction, "Resume a suspended (Aborted) job",
			"the job is Running again (or has ended)", batchv1alpha1.JobRunning, runningOrEnded(false)),
		newDelete(f))
	return cmd
}

type runOptions struct {
	name, image, queue, scheduler, filename string
	requests, limits                        string
	replicas, min                           int32
	output                                  string
	waitOptions
}

func newRun(f *cmdutil.Factory) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run NAME [flags] [-- COMMAND [ARG...]]",
		Short: "Run a job of one task from flags, or the job of a file",
		Example: `  calderactl job run sleeper --image busybox --replicas 4 --min 4 --requests cpu=1 -- sleep 60
  calderactl job run -f examples/batch/tensorflow-ps-worker.yaml --queue research`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var command []string
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				command, args = args[at:], args[:at]
			}
			return o.run(cmd, f, args, command)
		},
	}
	cmd.Flags().StringVar(&o.name, "name", "", "the job's name (or give it as the argument)")
	cmd.Flags().StringVarP(&o.filename, "filename", "f", "", "a YAML file of a Volcano Job to run instead of one made from flags")
	cmd.Flags().StringVar(&o.image, "image", "busybox", "the container image")
	cmd.Flags().Int32Var(&o.replicas, "replicas", 1, "the number of pods")
	cmd.Flags().Int32Var(&o.min, "min", 0, "the fewest pods that must be placed together (default: all the replicas)")
	cmd.Flags().StringVar(&o.requests, "requests", "cpu=1000m,memory=100Mi", "each pod's requests, as cpu=1,memory=1Gi,nvidia.com/gpu=1")
	cmd.Flags().StringVar(&o.limits, "limits", "cpu=1000m,memory=100Mi", "each pod's limits")
	cmd.Flags().StringVar(&o.queue, "queue", "", "the queue (default: the file's, else default)")
	cmd.Flags().StringVar(&o.scheduler, "scheduler", "volcano", "the scheduler name")
	cmdutil.AddOutputFlag(cmd, &o.output, "name", cmdutil.OutputYAML, cmdutil.OutputJSON)
	o.addFlags(cmd, "the job is Running, or has ended (an end other than Completed is an error)")
	_ = cmd.RegisterFlagCompletionFunc("queue", queue.Completion(f))
	return cmd
}

func (o *runOptions) run(cmd *cobra.Command, f *cmdutil.Factory, args, command []string) error {
	if err := cmdutil.CheckOutput(o.output, "name", cmdutil.OutputYAML, cmdutil.OutputJSON); err != nil {
		return err
	}
	ns, err := f.Namespace()
	if err != nil {
		return err
	}
	var job *batchv1alpha1.Job
	if o.filename != "" {
		if len(args) > 0 || len(command) > 0 {
			return fmt.Errorf("--filename runs the file's job as written: give no name or command with it")
		}
		if job, err = readJob(o.filename); err != nil {
			return err
		}
		if job.Namespace == "" {
			job.Namespace = ns
		}
		if cmd.Flags().Changed("queue") {
			job.Spec.Queue = o.queue
		}
	} else {
		name, err := cmdutil.NameArg(args, o.name)
		if err != nil {
			return err
		}
		if job, err = o.fromFlags(name, ns, command); err != nil {
			return err
		}
	}
	c, err := f.Client()
	if err != nil {
		return err
	}
	ctx := cmdutil.Context(cmd)
	q := job.Spec.Queue
	if q == "" {
		q = schedulingv1beta1.DefaultQueue
	}
	if _, err := queue.Get(ctx, c, q); err != nil {
		return fmt.Errorf("the job's queue: %w", err)
	}
	if err := c.Create(ctx, job); err != nil {
		return fmt.Errorf("creating job %s/%s: %w", job.Namespace, job.Name, err)
	}
	if o.output != "name" {
		if err := f.PrintObjects(o.output, false, job); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.Out, "job.batch.volcano.sh/%s created\n", job.Name)
	}
	if !o.wait {
		return nil
	}
	j, err := o.waitFor(ctx, c, client.ObjectKeyFromObject(job), string(batchv1alpha1.JobRunning), runningOrEnded(true))
	if err != nil {
		return err
	}
	if o.output == "name" {
		fmt.Fprintf(f.Out, "job.batch.volcano.sh/%s is %s\n", j.Name, j.Status.State.Phase)
	}
	return nil
}

// fromFlags is a job of one task, named as the job, of replicas pods.
func (o *runOptions) fromFlags(name, ns string, command []string) (*batchv1alpha1.Job, error) {
	requests, err := cmdutil.ParseResources("requests", o.requests)
	if err != nil {
		return nil, err
	}
	limits, err := cmdutil.ParseResources("limits", o.limits)
	if err != nil {
		return nil, err
	}
	if o.replicas < 1 {
		return nil, fmt.Errorf("--replicas %d: a job runs at least one pod", o.replicas)
	}
	min := o.min
	if min == 0 {
		min = o.replicas
	}
	if min < 0 || min > o.replicas {
		return nil, fmt.Errorf("--min %d: must be between 1 and --replicas (%d)", min, o.replicas)
	}
	return &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1alpha1.JobSpec{
			SchedulerName: o.scheduler, Queue: o.queue, MinAvailable: min,
			// The task's minimum is the job's: a task keeping all its
			// replicas as its own minimum would hold the gang to them.
			Tasks: []batchv1alpha1.TaskSpec{{Name: name, Replicas: o.replicas, MinAvailable: &min, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers: []corev1.Container{{Name: name, Image: o.image, ImagePullPolicy: corev1.PullIfNotPresent, Command: command,
					Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}},
			}}}},
		},
	}, nil
}

func readJob(path string) (*batchv1alpha1.Job, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	job := &batchv1alpha1.Job{}
	if err := yaml.UnmarshalStrict(raw, job); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if job.Kind != "" && job.Kind != "Job" || job.APIVersion != "" && job.APIVersion != batchv1alpha1.SchemeGroupVersion.String() {
		return nil, fmt.Errorf("%s: a %s %s, not a %s Job", path, job.APIVersion, job.Kind, batchv1alpha1.SchemeGroupVersion)
	}
	if job.Name == "" {
		return nil, fmt.Errorf("%s: metadata.name is empty", path)
	}
	return job, nil
}

type listOptions struct {
	all             bool
	queue, selector string
	output          string
}

func newList(f *cmdutil.Factory) *cobra.Command {
	o := &listOptions{}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List jobs",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd, f)
		},
	}
	cmd.Flags().BoolVarP(&o.all, "all-namespaces", "A", false, "list the jobs of every namespace")
	cmd.Flags().StringVar(&o.queue, "queue", "", "only the jobs of this queue")
	cmd.Flags().StringVarP(&o.selector, "selector", "l", "", "only the jobs with these labels, as app=x,tier!=y")
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputTable, cmdutil.OutputWide, cmdutil.OutputYAML, cmdutil.OutputJSON)
	_ = cmd.RegisterFlagCompletionFunc("queue", queue.Completion(f))
	return cmd
}

func (o *listOptions) run(cmd *cobra.Command, f *cmdutil.Factory) error {
	if err := cmdutil.CheckOutput(o.output, cmdutil.OutputTable, cmdutil.OutputWide, cmdutil.OutputYAML, cmdutil.OutputJSON); err != nil {
		return err
	}
	c, err := f.Client()
	if err != nil {
		return err
	}
	ctx := cmdutil.Context(cmd)
	opts, err := f.InNamespace(o.all)
	if err != nil {
		return err
	}
	if o.selector != "" {
		sel, err := metav1.ParseToLabelSelector(o.selector)
		if err != nil {
			return fmt.Errorf("--selector %q: %w", o.selector, err)
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return fmt.Errorf("--selector %q: %w", o.selector, err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: s})
	}
	if o.queue != "" {
		if _, err := queue.Get(ctx, c, o.queue); err != nil {
			return err
		}
	}
	var l batchv1alpha1.JobList
	if err := c.List(ctx, &l, opts...); err != nil {
		return fmt.Errorf("listing jobs: %w", err)
	}
	jobs := slices.DeleteFunc(l.Items, func(j batchv1alpha1.Job) bool { return o.queue != "" && queueOf(&j) != o.queue })
	slices.SortFunc(jobs, func(a, b batchv1alpha1.Job) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	if o.output == cmdutil.OutputYAML || o.output == cmdutil.OutputJSON {
		objs := make([]client.Object, len(jobs))
		for i := range jobs {
			objs[i] = &jobs[i]
		}
		return f.PrintObjects(o.output, true, objs...)
	}
	if len(jobs) == 0 {
		fmt.Fprintln(f.Out, "No jobs found.")
		return nil
	}
	headers := []string{"NAME", "QUEUE", "PHASE", "MIN", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "RETRIES", "AGE"}
	if o.output == cmdutil.OutputWide {
		headers = append(headers, "TASKS", "PRIORITY", "SCHEDULER")
	}
	if o.all {
		headers = append([]string{"NAMESPACE"}, headers...)
	}
	rows := make([][]string, 0, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		st := j.Status
		row := []string{j.Name, queueOf(j), cmdutil.Or(string(st.State.Phase), "-"), strconv.Itoa(int(j.Spec.MinAvailable)),
			itoa(st.Pending), itoa(st.Running), itoa(st.Succeeded), itoa(st.Failed), itoa(st.RetryCount), f.Age(j.CreationTimestamp.Time)}
		if o.output == cmdutil.OutputWide {
			row = append(row, tasks(j), cmdutil.Or(j.Spec.PriorityClassName, "-"), cmdutil.Or(j.Spec.SchedulerName, "-"))
		}
		if o.all {
			row = append([]string{j.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	return f.Table(headers, rows)
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func queueOf(j *batchv1alpha1.Job) string {
	if j.Spec.Queue == "" {
		return schedulingv1beta1.DefaultQueue
	}
	return j.Spec.Queue
}

// tasks is "ps=1,worker=4".
func tasks(j *batchv1alpha1.Job) string {
	parts := make([]string, 0, len(j.Spec.Tasks))
	for _, t := range j.Spec.Tasks {
		parts = append(parts, fmt.Sprintf("%s=%d", t.Name, t.Replicas))
	}
	return cmdutil.Or(strings.Join(parts, ","), "-")
}

// newCommand returns a verb that issues a bus Command to a job; with
// --wait it then waits until g says the job is in phase want (until, in
// the flag's help).
func newCommand(f *cmdutil.Factory, verb string, action busv1alpha1.Action, short, until string, want batchv1alpha1.JobPhase, g goal) *cobra.Command {
	o := &waitOptions{}
	cmd := cmdutil.Named(f, verb+" NAME", short, "job", Completion(f), func(ctx context.Context, c client.Client, name string) error {
		j, err := Get(ctx, f, c, name)
		if err != nil {
			return err
		}
		if err := cmdutil.IssueCommand(ctx, c, j.Namespace, j, batchv1alpha1.SchemeGroupVersion.WithKind("Job"), action); err != nil {
			return err
		}
		fmt.Fprintf(f.Out, "job.batch.volcano.sh/%s: %s issued\n", j.Name, action)
		if !o.wait {
			return nil
		}
		if j, err = o.waitFor(ctx, c, client.ObjectKeyFromObject(j), string(want), g); err != nil {
			return err
		}
		fmt.Fprintf(f.Out, "job.batch.volcano.sh/%s is %s\n", j.Name, j.Status.State.Phase)
		return nil
	})
	o.addFlags(cmd, until)
	return cmd
}

func newDelete(f *cmdutil.Factory) *cobra.Command {
	o := &waitOptions{}
	cmd := cmdutil.Named(f, "delete NAME", "Delete a job and its pods", "job", Completion(f), func(ctx context.Context, c client.Client, name string) error {
		j, err := Get(ctx, f, c, name)
		if err != nil {
			return err
		}
		if err := c.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			return fmt.Errorf("deleting job %s/%s: %w", j.Namespace, j.Name, err)
		}
		fmt.Fprintf(f.Out, "job.batch.volcano.sh/%s deleted\n", j.Name)
		if !o.wait {
			return nil
		}
		return o.waitGone(ctx, c, client.ObjectKeyFromObject(j))
	})
	o.addFlags(cmd, "the job is gone (its pods may still be terminating)")
	return cmd
}

// Get reads a job of the current namespace; one that does not exist is an
// error naming the jobs that do.
func Get(ctx context.Context, f *cmdutil.Factory, c client.Client, name string) (*batchv1alpha1.Job, error) {
	ns, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	j := &batchv1alpha1.Job{}
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j)
	if apierrors.IsNotFound(err) {
		var l batchv1alpha1.JobList
		if lerr := c.List(ctx, &l, client.InNamespace(ns)); lerr != nil || len(l.Items) == 0 {
			return nil, fmt.Errorf("job %q not found in namespace %s", name, ns)
		}
		names := make([]string, 0, len(l.Items))
		for _, j := range l.Items {
			names = append(names, j.Name)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("job %q not found in namespace %s; its jobs are: %s", name, ns, strings.Join(names, ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("reading job %s/%s: %w", ns, name, err)
	}
	return j, nil
}

// Completion completes job names of the current namespace.
func Completion(f *cmdutil.Factory) cobra.CompletionFunc {
	return cmdutil.Completion(f, func(ctx context.Context, c client.Client) ([]string, error) {
		ns, err := f.Namespace()
		if err != nil {
			return nil, err
		}
		var l batchv1alpha1.JobList
		if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		names := make([]string, 0, len(l.Items))
		for _, j := range l.Items {
			names = append(names, j.Name)
		}
		return names, nil
	})
}
