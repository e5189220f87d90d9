// Package queue implements `calderactl queue`: create, read, open, close,
// delete Volcano Queues, and `queue top`, the hierarchy's use against its
// shares.
package queue

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
)

// NewCommand returns the `queue` command group.
func NewCommand(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "queue",
		Aliases: []string{"queues", "q"},
		Short:   "Create, list, open, close and delete queues; see their use with top",
	}
	cmd.AddCommand(newCreate(f), newGet(f), newList(f), newState(f, "open"), newState(f, "close"), newOperate(f), newDelete(f), newTop(f))
	return cmd
}

type createOptions struct {
	name, parent, state             string
	weight, priority                int32
	capability, deserved, guarantee string
	reclaimable                     bool
	reclaimableSet                  bool
	output                          string
}

func newCreate(f *cmdutil.Factory) *cobra.Command {
	o := &createOptions{}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a queue",
		Example: `  calderactl queue create research --weight 2 --capability cpu=64,nvidia.com/gpu=16
  calderactl queue create research-nlp --parent research --deserved nvidia.com/gpu=8`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.reclaimableSet = cmd.Flags().Changed("reclaimable")
			return o.run(cmd, f, args)
		},
	}
	cmd.Flags().StringVar(&o.name, "name", "", "the queue's name (or give it as the argument)")
	cmd.Flags().Int32Var(&o.weight, "weight", 1, "the queue's weight: its share of what its parent holds, against its siblings'")
	cmd.Flags().StringVar(&o.parent, "parent", "", "the parent queue (default root)")
	cmd.Flags().StringVar(&o.capability, "capability", "", "the most the queue may use, as cpu=64,nvidia.com/gpu=16")
	cmd.Flags().StringVar(&o.deserved, "deserved", "", "what the queue deserves (capacity plugin), as cpu=32")
	cmd.Flags().StringVar(&o.guarantee, "guarantee", "", "what is kept for the queue whatever others need, as cpu=8")
	cmd.Flags().Int32Var(&o.priority, "priority", 0, "the queue's priority: higher queues are served and reclaim first")
	cmd.Flags().BoolVar(&o.reclaimable, "reclaimable", true, "whether others may reclaim what the queue uses beyond its share")
	cmd.Flags().StringVar(&o.state, "state", "", "Open or Closed (default Open)")
	cmdutil.AddOutputFlag(cmd, &o.output, "name", cmdutil.OutputYAML, cmdutil.OutputJSON)
	return cmd
}

func (o *createOptions) run(cmd *cobra.Command, f *cmdutil.Factory, args []string) error {
	name, err := cmdutil.NameArg(args, o.name)
	if err != nil {
		return err
	}
	if err := cmdutil.CheckOutput(o.output, "name", cmdutil.OutputYAML, cmdutil.OutputJSON); err != nil {
		return err
	}
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1beta1.QueueSpec{
		Weight: o.weight, Parent: o.parent, Priority: o.priority,
	}}
	if q.Spec.Capability, err = cmdutil.ParseResources("capability", o.capability); err != nil {
		return err
	}
	if q.Spec.Deserved, err = cmdutil.ParseResources("deserved", o.deserved); err != nil {
		return err
	}
	if q.Spec.Guarantee.Resource, err = cmdutil.ParseResources("guarantee", o.guarantee); err != nil {
		return err
	}
	if o.reclaimableSet {
		q.Spec.Reclaimable = &o.reclaimable
	}
	switch strings.ToLower(o.state) {
	case "":
	case "open":
		q.Status.State = schedulingv1beta1.QueueStateOpen
	case "closed":
		q.Status.State = schedulingv1beta1.QueueStateClosed
	default:
		return fmt.Errorf("--state %q: not Open or Closed", o.state)
	}
	c, err := f.Client()
	if err != nil {
		return err
	}
	ctx := cmdutil.Context(cmd)
	if o.parent != "" {
		if err := mustExist(ctx, c, o.parent, "--parent"); err != nil {
			return err
		}
	}
	state := q.Status.State
	if err := c.Create(ctx, q); err != nil {
		return fmt.Errorf("creating queue %s: %w", name, err)
	}
	if state == schedulingv1beta1.QueueStateClosed {
		// A new queue is open: closing it is a command.
		if err := issue(ctx, f, c, q, busv1alpha1.CloseQueueAction); err != nil {
			return err
		}
	}
	if o.output != "name" {
		return f.PrintObjects(o.output, false, q)
	}
	fmt.Fprintf(f.Out, "queue.scheduling.volcano.sh/%s created\n", name)
	return nil
}

type getOptions struct {
	name, output string
}

func newGet(f *cmdutil.Factory) *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:               "get NAME",
		Short:             "Show one queue",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: Completion(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := cmdutil.NameArg(args, o.name)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputTable, cmdutil.OutputWide, cmdutil.OutputYAML, cmdutil.OutputJSON); err != nil {
				return err
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			q, err := Get(cmdutil.Context(cmd), c, name)
			if err != nil {
				return err
			}
			return print(f, o.output, false, []schedulingv1beta1.Queue{*q})
		},
	}
	cmd.Flags().StringVar(&o.name, "name", "", "the queue's name (or give it as the argument)")
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputTable, cmdutil.OutputWide, cmdutil.OutputYAML, cmdutil.OutputJSON)
	return cmd
}

func newList(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the queues",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cmdutil.CheckOutput(output, cmdutil.OutputTable, cmdutil.OutputWide, cmdutil.OutputYAML, cmdutil.OutputJSON); err != nil {
				return err
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			var l schedulingv1beta1.QueueList
			if err := c.List(cmdutil.Context(cmd), &l); err != nil {
				return fmt.Errorf("listing queues: %w", err)
			}
			slices.SortFunc(l.Items, func(a, b schedulingv1beta1.Queue) int { return strings.Compare(a.Name, b.Name) })
			return print(f, output, true, l.Items)
		},
	}
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputTable, cmdutil.OutputWide, cmdutil.OutputYAML, cmdutil.OutputJSON)
	return cmd
}

// print writes queues in the format.
func print(f *cmdutil.Factory, output string, list bool, qs []schedulingv1beta1.Queue) error {
	if output == cmdutil.OutputYAML || output == cmdutil.OutputJSON {
		objs := make([]client.Object, len(qs))
		for i := range qs {
			objs[i] = &qs[i]
		}
		return f.PrintObjects(output, list, objs...)
	}
	headers := []string{"NAME", "STATE", "PARENT", "WEIGHT", "PRIORITY", "PENDING", "INQUEUE", "RUNNING", "ALLOCATED", "AGE"}
	if output == cmdutil.OutputWide {
		headers = append(headers[:len(headers)-1], "DESERVED", "GUARANTEE", "CAPABILITY", "AGE")
	}
	rows := make([][]string, 0, len(qs))
	for _, q := range qs {
		row := []string{q.Name, cmdutil.Or(string(q.Status.State), "-"), parentOf(&q), strconv.Itoa(int(q.Spec.Weight)),
			strconv.Itoa(int(q.Spec.Priority)), strconv.Itoa(int(q.Status.Pending)), strconv.Itoa(int(q.Status.Inqueue)),
			strconv.Itoa(int(q.Status.Running)), cmdutil.Resources(q.Status.Allocated)}
		if output == cmdutil.OutputWide {
			row = append(row, cmdutil.Resources(q.Spec.Deserved), cmdutil.Resources(q.Spec.Guarantee.Resource), cmdutil.Resources(q.Spec.Capability))
		}
		rows = append(rows, append(row, f.Age(q.CreationTimestamp.Time)))
	}
	if len(rows) == 0 {
		fmt.Fprintln(f.Out, "No queues found.")
		return nil
	}
	return f.Table(headers, rows)
}

// parentOf is the queue's parent: root when it names none.
func parentOf(q *schedulingv1beta1.Queue) string {
	switch {
	case q.Name == schedulingv1beta1.RootQueue:
		return "-"
	case q.Spec.Parent == "":
		return schedulingv1beta1.RootQueue
	}
	return q.Spec.Parent
}

// newState returns `queue open` or `queue close`.
func newState(f *cmdutil.Factory, verb string) *cobra.Command {
	action, short := busv1alpha1.OpenQueueAction, "Open a queue: its jobs may be admitted again"
	if verb == "close" {
		action, short = busv1alpha1.CloseQueueAction, "Close a queue: no new job is admitted; running work finishes"
	}
	return cmdutil.Named(f, verb+" NAME", short, "queue", Completion(f), func(ctx context.Context, c client.Client, name string) error {
		return operate(ctx, f, c, name, action)
	})
}

// newOperate is vcctl's `queue operate --action open|close`.
func newOperate(f *cmdutil.Factory) *cobra.Command {
	var name, action string
	cmd := &cobra.Command{
		Use:   "operate NAME --action open|close",
		Short: "Open or close a queue, as vcctl queue operate does",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := cmdutil.NameArg(args, name)
			if err != nil {
				return err
			}
			a := busv1alpha1.OpenQueueAction
			switch strings.ToLower(action) {
			case "open":
			case "close":
				a = busv1alpha1.CloseQueueAction
			default:
				return fmt.Errorf("--action %q: not open or close", action)
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			return operate(cmdutil.Context(cmd), f, c, n, a)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the queue's name (or give it as the argument)")
	cmd.Flags().StringVarP(&action, "action", "a", "", "open or close")
	return cmd
}

func operate(ctx context.Context, f *cmdutil.Factory, c client.Client, name string, action busv1alpha1.Action) error {
	q, err := Get(ctx, c, name)
	if err != nil {
		return err
	}
	if err := issue(ctx, f, c, q, action); err != nil {
		return err
	}
	fmt.Fprintf(f.Out, "queue.scheduling.volcano.sh/%s: %s issued\n", name, action)
	return nil
}

// issue creates the Command that asks the controller manager to act on
// the queue, in the current namespace.
func issue(ctx context.Context, f *cmdutil.Factory, c client.Client, q *schedulingv1beta1.Queue, action busv1alpha1.Action) error {
	ns, err := f.Namespace()
	if err != nil {
		return err
	}
	return cmdutil.IssueCommand(ctx, c, ns, q, schedulingv1beta1.SchemeGroupVersion.WithKind("Queue"), action)
}

func newDelete(f *cmdutil.Factory) *cobra.Command {
	return cmdutil.Named(f, "delete NAME", "Delete a queue", "queue", Completion(f), func(ctx context.Context, c client.Client, name string) error {
		q, err := Get(ctx, c, name)
		if err != nil {
			return err
		}
		if err := c.Delete(ctx, q); err != nil {
			return fmt.Errorf("deleting queue %s: %w", name, err)
		}
		fmt.Fprintf(f.Out, "queue.scheduling.volcano.sh/%s deleted\n", name)
		return nil
	})
}

// Get reads a queue; one that does not exist is an error naming the
// queues that do.
func Get(ctx context.Context, c client.Client, name string) (*schedulingv1beta1.Queue, error) {
	q := &schedulingv1beta1.Queue{}
	err := c.Get(ctx, client.ObjectKey{Name: name}, q)
	if apierrors.IsNotFound(err) {
		return nil, NotFound(ctx, c, name, "")
	}
	if err != nil {
		return nil, fmt.Errorf("reading queue %s: %w", name, err)
	}
	return q, nil
}

// mustExist is Get's error for the queue a flag names.
func mustExist(ctx context.Context, c client.Client, name, flag string) error {
	err := c.Get(ctx, client.ObjectKey{Name: name}, &schedulingv1beta1.Queue{})
	if apierrors.IsNotFound(err) {
		return NotFound(ctx, c, name, flag)
	}
	return err
}

// NotFound says a queue does not exist and lists those that do.
func NotFound(ctx context.Context, c client.Client, name, flag string) error {
	var l schedulingv1beta1.QueueList
	prefix := ""
	if flag != "" {
		prefix = flag + ": "
	}
	if err := c.List(ctx, &l); err != nil || len(l.Items) == 0 {
		return fmt.Errorf("%squeue %q not found", prefix, name)
	}
	names := make([]string, 0, len(l.Items))
	for _, q := range l.Items {
		names = append(names, q.Name)
	}
	slices.Sort(names)
	return fmt.Errorf("%squeue %q not found; the queues are: %s", prefix, name, strings.Join(names, ", "))
}

// Completion completes queue names.
func Completion(f *cmdutil.Factory) cobra.CompletionFunc {
	return cmdutil.Completion(f, func(ctx context.Context, c client.Client) ([]string, error) {
		var l schedulingv1beta1.QueueList
		if err := c.List(ctx, &l); err != nil {
			return nil, err
		}
		names := make([]string, 0, len(l.Items))
		for _, q := range l.Items {
			names = append(names, q.Name)
		}
		return names, nil
	})
}
