package queue

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
	"github.com/caldera-sh/caldera/pkg/quantity"
)

func newTop(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "top [NAME]",
		Short: "Show each queue's allocation against what it deserves and may use, as a tree",
		Long: `Show the queue hierarchy as a tree: per queue and resource, what is
allocated now, what the queue deserves and is guaranteed, its capability,
and the allocation as a share of what it deserves (of its capability when
it deserves nothing set). With NAME, only that queue and the queues under it.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: Completion(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			ctx := cmdutil.Context(cmd)
			var l schedulingv1beta1.QueueList
			if err := c.List(ctx, &l); err != nil {
				return fmt.Errorf("listing queues: %w", err)
			}
			top := ""
			if len(args) == 1 {
				if _, err := Get(ctx, c, args[0]); err != nil {
					return err
				}
				top = args[0]
			}
			return f.Table([]string{"QUEUE", "STATE", "WEIGHT", "RESOURCE", "ALLOCATED", "DESERVED", "GUARANTEE", "CAPABILITY", "USE"}, TopRows(l.Items, top))
		},
	}
	return cmd
}

// TopRows are the rows of `queue top`: the queues as a tree under top (""
// means every tree), children by name, a row per resource.
func TopRows(queues []schedulingv1beta1.Queue, top string) [][]string {
	byName := map[string]*schedulingv1beta1.Queue{}
	children := map[string][]string{}
	for i := range queues {
		q := &queues[i]
		byName[q.Name] = q
	}
	var roots []string
	for _, q := range queues {
		parent := q.Spec.Parent
		if parent == "" && q.Name != schedulingv1beta1.RootQueue {
			parent = schedulingv1beta1.RootQueue
		}
		if _, ok := byName[parent]; !ok || q.Name == schedulingv1beta1.RootQueue {
			roots = append(roots, q.Name)
			continue
		}
		children[parent] = append(children[parent], q.Name)
	}
	for _, kids := range children {
		slices.Sort(kids)
	}
	slices.Sort(roots)
	if top != "" {
		roots = []string{top}
	}
	var rows [][]string
	var walk func(name, prefix, childPrefix string)
	walk = func(name, prefix, childPrefix string) {
		q := byName[name]
		if q == nil {
			return
		}
		names := quantity.SortedNames(q.Status.Allocated, q.Spec.Deserved, q.Spec.Guarantee.Resource, q.Spec.Capability)
		if len(names) == 0 {
			names = []corev1.ResourceName{""}
		}
		for i, r := range names {
			first := []string{prefix + name, cmdutil.Or(string(q.Status.State), "-"), strconv.Itoa(int(q.Spec.Weight))}
			if i > 0 {
				first = []string{childPrefix + continuation(len(children[name]) > 0), "", ""}
			}
			if r == "" {
				rows = append(rows, append(first, "-", "-", "-", "-", "-", "-"))
				continue
			}
			rows = append(rows, append(first, string(r), amount(q.Status.Allocated, r), amount(q.Spec.Deserved, r),
				amount(q.Spec.Guarantee.Resource, r), amount(q.Spec.Capability, r), use(q, r)))
		}
		kids := children[name]
		for i, kid := range kids {
			branch, next := "├─ ", "│  "
			if i == len(kids)-1 {
				branch, next = "└─ ", "   "
			}
			walk(kid, childPrefix+branch, childPrefix+next)
		}
	}
	for _, r := range roots {
		walk(r, "", "")
	}
	return rows
}

// continuation is what a queue's second and later resource rows show in
// the tree column: the line down to its children, if it has any.
func continuation(hasChildren bool) string {
	if hasChildren {
		return "│"
	}
	return ""
}

func amount(rl corev1.ResourceList, r corev1.ResourceName) string {
	q, ok := rl[r]
	if !ok {
		return "-"
	}
	return q.String()
}

// use is the allocation as a share of what the queue deserves, else of
// its capability.
func use(q *schedulingv1beta1.Queue, r corev1.ResourceName) string {
	alloc, ok := q.Status.Allocated[r]
	if !ok {
		alloc = resource.Quantity{}
	}
	of, ok := q.Spec.Deserved[r]
	if !ok {
		if of, ok = q.Spec.Capability[r]; !ok {
			return "-"
		}
	}
	if of.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%d%%", alloc.MilliValue()*100/of.MilliValue())
}
