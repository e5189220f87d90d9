package cmdutil

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	busv1alpha1 "github.com/caldera-sh/caldera/apis/bus/v1alpha1"
)

// Named builds a command that acts on one object, named by its argument or
// by --name (what the object is, for the flag's help); run gets a client.
func Named(f *Factory, use, short, what string, complete cobra.CompletionFunc, run func(ctx context.Context, c client.Client, name string) error) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:               use,
		Short:             short,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := NameArg(args, name)
			if err != nil {
				return err
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			return run(Context(cmd), c, n)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", fmt.Sprintf("the %s's name (or give it as the argument)", what))
	return cmd
}

// Completion completes a command's one argument with the names list gives
// that start with what was typed.
func Completion(f *Factory, list func(ctx context.Context, c client.Client) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := f.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names, err := list(Context(cmd), c)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// IssueCommand creates the bus Command of action addressed to target (of
// kind gvk), in namespace ns, owned by the target so that it goes with it;
// the controller manager executes it and deletes it.
func IssueCommand(ctx context.Context, c client.Client, ns string, target client.Object, gvk schema.GroupVersionKind, action busv1alpha1.Action) error {
	ref := metav1.NewControllerRef(target, gvk)
	cmd := &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: target.GetName() + "-" + strings.ToLower(string(action)) + "-",
			OwnerReferences: []metav1.OwnerReference{*ref}},
		Action:       string(action),
		TargetObject: ref,
		Reason:       "CalderactlIssued",
		Message:      fmt.Sprintf("%s issued by calderactl", action),
	}
	if err := c.Create(ctx, cmd); err != nil {
		return fmt.Errorf("issuing %s to %s %s: %w", action, strings.ToLower(gvk.Kind), target.GetName(), err)
	}
	return nil
}
