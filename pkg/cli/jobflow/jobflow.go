// Package jobflow is `calderactl jobflow` and `calderactl jobtemplate`:
// create, list, view (describe) and delete flow.volcano.sh JobFlows and
// JobTemplates.
package jobflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1alpha1 "github.com/caldera-sh/caldera/apis/flow/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
)

// NewFlowCommand returns `jobflow`.
func NewFlowCommand(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "jobflow", Aliases: []string{"jobflows", "jf"}, Short: "Create, list, view and delete job flows"}
	cmd.AddCommand(newCreate(f, "JobFlow"), newFlowList(f), newFlowView(f, "view"), newFlowView(f, "describe"),
		newDelete(f, "jobflow", func() client.Object { return &flowv1alpha1.JobFlow{} }, flowNames))
	return cmd
}

// NewTemplateCommand returns `jobtemplate`.
func NewTemplateCommand(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "jobtemplate", Aliases: []string{"jobtemplates", "jt"}, Short: "Create, list, view and delete job templates"}
	cmd.AddCommand(newCreate(f, "JobTemplate"), newTemplateList(f), newTemplateView(f, "view"), newTemplateView(f, "describe"),
		newDelete(f, "jobtemplate", func() client.Object { return &flowv1alpha1.JobTemplate{} }, templateNames))
	return cmd
}

// newCreate creates the objects of kind in a file (others in it are
// skipped), in -n's namespace unless they name one.
func newCreate(f *cmdutil.Factory, kind string) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "create -f FILE",
		Short: "Create the " + kind + "s of a manifest",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return fmt.Errorf("-f FILE is required: a manifest of flow.volcano.sh/v1alpha1 %ss", kind)
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			ns, err := f.Namespace()
			if err != nil {
				return err
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(raw)), 4096)
			n := 0
			for {
				var u unstructured.Unstructured
				if err := dec.Decode(&u.Object); err != nil {
					if errors.Is(err, io.EOF) {
						break
					}
					return fmt.Errorf("%s: %w", file, err)
				}
				if u.GetKind() != kind || u.GetAPIVersion() != flowv1alpha1.SchemeGroupVersion.String() {
					continue
				}
				if u.GetNamespace() == "" {
					u.SetNamespace(ns)
				}
				if err := c.Create(cmdutil.Context(cmd), &u); err != nil {
					return fmt.Errorf("creating %s %s/%s: %w", strings.ToLower(kind), u.GetNamespace(), u.GetName(), err)
				}
				fmt.Fprintf(f.Out, "%s.flow.volcano.sh/%s created\n", strings.ToLower(kind), u.GetName())
				n++
			}
			if n == 0 {
				return fmt.Errorf("%s holds no flow.volcano.sh/v1alpha1 %s", file, kind)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the manifest")
	return cmd
}

func newFlowList(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use: "list", Aliases: []string{"ls"}, Short: "List job flows with their progress", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := clientAndNamespace(f)
			if err != nil {
				return err
			}
			var l flowv1alpha1.JobFlowList
			if err := c.List(cmdutil.Context(cmd), &l, client.InNamespace(ns)); err != nil {
				return fmt.Errorf("listing job flows: %w", err)
			}
			if len(l.Items) == 0 {
				fmt.Fprintln(f.Out, "No job flows found.")
				return nil
			}
			slices.SortFunc(l.Items, func(a, b flowv1alpha1.JobFlow) int { return strings.Compare(a.Name, b.Name) })
			var rows [][]string
			for _, jf := range l.Items {
				st := jf.Status
				rows = append(rows, []string{jf.Name, cmdutil.Or(string(st.State.Phase), "-"), fmt.Sprint(len(jf.Spec.Flows)),
					fmt.Sprint(len(st.PendingJobs)), fmt.Sprint(len(st.RunningJobs)), fmt.Sprint(len(st.CompletedJobs)),
					fmt.Sprint(len(st.FailedJobs) + len(st.TerminatedJobs)), string(jf.Spec.JobRetainPolicy), f.Age(jf.CreationTimestamp.Time)})
			}
			return f.Table([]string{"NAME", "PHASE", "FLOWS", "PENDING", "RUNNING", "COMPLETED", "FAILED", "RETAIN", "AGE"}, rows)
		},
	}
}

func newFlowView(f *cmdutil.Factory, verb string) *cobra.Command {
	return cmdutil.Named(f, verb+" NAME", "Show a job flow: its flows, what each waits for, and its Jobs", "job flow", completion(f, flowNames), func(ctx context.Context, c client.Client, name string) error {
		ns, err := f.Namespace()
		if err != nil {
			return err
		}
		var jf flowv1alpha1.JobFlow
		if err := get(ctx, c, ns, name, &jf, "job flow", flowNames); err != nil {
			return err
		}
		fmt.Fprintf(f.Out, "Name:        %s\nNamespace:   %s\nPhase:       %s\nRetain:      %s\nFlows:\n", jf.Name, jf.Namespace,
			cmdutil.Or(string(jf.Status.State.Phase), "-"), jf.Spec.JobRetainPolicy)
		byJob := map[string]flowv1alpha1.JobStatus{}
		for _, s := range jf.Status.JobStatusList {
			byJob[s.Name] = s
		}
		var rows [][]string
		for _, fl := range jf.Spec.Flows {
			after := "-"
			if fl.DependsOn != nil && len(fl.DependsOn.Targets) > 0 {
				after = strings.Join(fl.DependsOn.Targets, ",")
			}
			job := jf.Name + "-" + fl.Name
			state, restarts := "not started", "-"
			if s, ok := byJob[job]; ok {
				state, restarts = cmdutil.Or(string(s.State), "Pending"), fmt.Sprint(s.RestartCount)
			}
			rows = append(rows, []string{"  " + fl.Name, after, job, state, restarts})
		}
		return f.Table([]string{"  FLOW", "AFTER", "JOB", "STATE", "RESTARTS"}, rows)
	})
}

func newTemplateList(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use: "list", Aliases: []string{"ls"}, Short: "List job templates", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := clientAndNamespace(f)
			if err != nil {
				return err
			}
			var l flowv1alpha1.JobTemplateList
			if err := c.List(cmdutil.Context(cmd), &l, client.InNamespace(ns)); err != nil {
				return fmt.Errorf("listing job templates: %w", err)
			}
			if len(l.Items) == 0 {
				fmt.Fprintln(f.Out, "No job templates found.")
				return nil
			}
			slices.SortFunc(l.Items, func(a, b flowv1alpha1.JobTemplate) int { return strings.Compare(a.Name, b.Name) })
			var rows [][]string
			for _, t := range l.Items {
				rows = append(rows, []string{t.Name, tasks(&t), fmt.Sprint(t.Spec.MinAvailable), cmdutil.Or(t.Spec.Queue, "default"), f.Age(t.CreationTimestamp.Time)})
			}
			return f.Table([]string{"NAME", "TASKS", "MIN", "QUEUE", "AGE"}, rows)
		},
	}
}

func tasks(t *flowv1alpha1.JobTemplate) string {
	var parts []string
	for _, ts := range t.Spec.Tasks {
		parts = append(parts, fmt.Sprintf("%s=%d", ts.Name, ts.Replicas))
	}
	return cmdutil.Or(strings.Join(parts, ","), "-")
}

func newTemplateView(f *cmdutil.Factory, verb string) *cobra.Command {
	var output string
	cmd := cmdutil.Named(f, verb+" NAME", "Show a job template", "job template", completion(f, templateNames), func(ctx context.Context, c client.Client, name string) error {
		ns, err := f.Namespace()
		if err != nil {
			return err
		}
		var t flowv1alpha1.JobTemplate
		if err := get(ctx, c, ns, name, &t, "job template", templateNames); err != nil {
			return err
		}
		return f.PrintObjects(output, false, &t)
	})
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputYAML, cmdutil.OutputJSON)
	return cmd
}

func newDelete(f *cmdutil.Factory, what string, obj func() client.Object, names func(context.Context, client.Client, string) ([]string, error)) *cobra.Command {
	return cmdutil.Named(f, "delete NAME", "Delete a "+what, what, completion(f, names), func(ctx context.Context, c client.Client, name string) error {
		ns, err := f.Namespace()
		if err != nil {
			return err
		}
		o := obj()
		if err := get(ctx, c, ns, name, o, what, names); err != nil {
			return err
		}
		if err := c.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			return fmt.Errorf("deleting %s %s/%s: %w", what, ns, name, err)
		}
		fmt.Fprintf(f.Out, "%s.flow.volcano.sh/%s deleted\n", what, name)
		return nil
	})
}

func clientAndNamespace(f *cmdutil.Factory) (client.Client, string, error) {
	c, err := f.Client()
	if err != nil {
		return nil, "", err
	}
	ns, err := f.Namespace()
	return c, ns, err
}

// get reads an object; one that does not exist is an error naming those
// that do.
func get(ctx context.Context, c client.Client, ns, name string, o client.Object, what string, names func(context.Context, client.Client, string) ([]string, error)) error {
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, o)
	if apierrors.IsNotFound(err) {
		if all, lerr := names(ctx, c, ns); lerr == nil && len(all) > 0 {
			return fmt.Errorf("%s %q not found in namespace %s; its %ss are: %s", what, name, ns, what, strings.Join(all, ", "))
		}
		return fmt.Errorf("%s %q not found in namespace %s", what, name, ns)
	}
	if err != nil {
		return fmt.Errorf("reading %s %s/%s: %w", what, ns, name, err)
	}
	return nil
}

func flowNames(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var l flowv1alpha1.JobFlowList
	if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []string
	for _, i := range l.Items {
		out = append(out, i.Name)
	}
	slices.Sort(out)
	return out, nil
}

func templateNames(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var l flowv1alpha1.JobTemplateList
	if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []string
	for _, i := range l.Items {
		out = append(out, i.Name)
	}
	slices.Sort(out)
	return out, nil
}

func completion(f *cmdutil.Factory, names func(context.Context, client.Client, string) ([]string, error)) cobra.CompletionFunc {
	return cmdutil.Completion(f, func(ctx context.Context, c client.Client) ([]string, error) {
		ns, err := f.Namespace()
		if err != nil {
			return nil, err
		}
		return names(ctx, c, ns)
	})
}
