// Package cmdutil holds what every calderactl command shares: the
// kubectl-style connection flags, the client, the output formats, and
// errors that say what to do.
package cmdutil

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	apischeme "github.com/caldera-sh/caldera/apis/scheme"
	"github.com/caldera-sh/caldera/pkg/federation/karmada"
)

// Output formats.
const (
	OutputTable = "table"
	OutputWide  = "wide"
	OutputYAML  = "yaml"
	OutputJSON  = "json"
)

// Factory connects commands to the cluster and to the terminal.
type Factory struct {
	Config *genericclioptions.ConfigFlags
	Out    io.Writer
	// Now is the clock ages are measured with.
	Now func() time.Time

	scheme *runtime.Scheme
	client client.Client
}

// NewFactory returns a factory writing to out, its flags to be added to
// the root command with AddFlags.
func NewFactory(out io.Writer) *Factory {
	return &Factory{Config: genericclioptions.NewConfigFlags(true), Out: out, Now: time.Now}
}

// AddFlags adds the kubectl connection flags (--kubeconfig, --context,
// -n/--namespace, ...) to the root command.
func (f *Factory) AddFlags(cmd *cobra.Command) {
	f.Config.AddFlags(cmd.PersistentFlags())
}

// Scheme is every API calderactl reads and writes.
func (f *Factory) Scheme() (*runtime.Scheme, error) {
	if f.scheme == nil {
		s, err := apischeme.New()
		if err != nil {
			return nil, err
		}
		// The Karmada API server's bindings, for explain.
		if err := karmada.AddToScheme(s); err != nil {
			return nil, err
		}
		f.scheme = s
	}
	return f.scheme, nil
}

// Client is a client of the cluster the flags name.
func (f *Factory) Client() (client.Client, error) {
	if f.client != nil {
		return f.client, nil
	}
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil, err
	}
	s, err := f.Scheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	f.client = c
	return c, nil
}

// RESTConfig is the connection the flags name.
func (f *Factory) RESTConfig() (*rest.Config, error) {
	cfg, err := f.Config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("no cluster to talk to: %w (set --kubeconfig or KUBECONFIG)", err)
	}
	cfg.UserAgent = "calderactl"
	return cfg, nil
}

// NamespaceGiven reports whether -n/--namespace was given.
func (f *Factory) NamespaceGiven() bool {
	return f.Config.Namespace != nil && *f.Config.Namespace != ""
}

// Namespace is the namespace of -n, else the kubeconfig context's, else
// "default".
func (f *Factory) Namespace() (string, error) {
	ns, _, err := f.Config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", err
	}
	return ns, nil
}

// InNamespace is the list option of a list command: the namespace
// Namespace gives, or none with --all-namespaces (all).
func (f *Factory) InNamespace(all bool) ([]client.ListOption, error) {
	if all {
		return nil, nil
	}
	ns, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	return []client.ListOption{client.InNamespace(ns)}, nil
}

// Age is how long ago t was, as kubectl prints it.
func (f *Factory) Age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(f.Now().Sub(t))
}

// AddOutputFlag adds -o/--output with the formats given (the first is the
// default) to the command.
func AddOutputFlag(cmd *cobra.Command, output *string, formats ...string) {
	*output = formats[0]
	cmd.Flags().StringVarP(output, "output", "o", formats[0], "output format: "+strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return formats, cobra.ShellCompDirectiveNoFileComp
	})
}

// CheckOutput refuses a format the command does not offer.
func CheckOutput(output string, formats ...string) error {
	if !slices.Contains(formats, output) {
		return fmt.Errorf("--output %q: not one of %s", output, strings.Join(formats, ", "))
	}
	return nil
}

// PrintObjects writes objects as YAML or JSON: one object as itself, more
// (or a list command's result, list true) as a v1 List, as kubectl does.
func (f *Factory) PrintObjects(output string, list bool, objs ...client.Object) error {
	s, err := f.Scheme()
	if err != nil {
		return err
	}
	items := make([]any, 0, len(objs))
	for _, o := range objs {
		o = o.DeepCopyObject().(client.Object)
		gvk, err := apiutil.GVKForObject(o, s)
		if err != nil {
			return err
		}
		o.GetObjectKind().SetGroupVersionKind(gvk)
		o.SetManagedFields(nil)
		items = append(items, o)
	}
	var v any = map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": items}
	if !list && len(items) == 1 {
		v = items[0]
	}
	switch output {
	case OutputJSON:
		enc := json.NewEncoder(f.Out)
		enc.SetIndent("", "    ")
		return enc.Encode(v)
	case OutputYAML:
		raw, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = f.Out.Write(raw)
		return err
	}
	return fmt.Errorf("--output %q is not yaml or json", output)
}

// Table writes rows under headers, aligned as kubectl aligns them.
func (f *Factory) Table(headers []string, rows [][]string) error {
	w := tabwriter.NewWriter(f.Out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, strings.Join(headers, "\t"))
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	return w.Flush()
}

// NameArg is the one object a command acts on: its argument, or the
// --name flag vcctl users know.
func NameArg(args []string, name string) (string, error) {
	switch {
	case len(args) == 1 && name != "" && args[0] != name:
		return "", fmt.Errorf("the name is given twice: %q and --name %q", args[0], name)
	case len(args) == 1:
		return args[0], nil
	case len(args) > 1:
		return "", fmt.Errorf("one name expected, got %d: %s", len(args), strings.Join(args, " "))
	case name != "":
		return name, nil
	}
	return "", fmt.Errorf("a name is required: give it as the argument (or --name)")
}

// Or is s, or dash when s is empty.
func Or(s, dash string) string {
	if s == "" {
		return dash
	}
	return s
}

// Context is the command's context.
func Context(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
