// Package explain implements `calderactl explain`: it gathers what is
// known of a job from the API server (the Job, its PodGroup, queue, binding
// and events) and prints the sentences package narrate makes of it.
package explain

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/caldera-sh/caldera/apis/scheduling/v1beta1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/cli/cmdutil"
	"github.com/caldera-sh/caldera/pkg/cli/explain/narrate"
	clijob "github.com/caldera-sh/caldera/pkg/cli/job"
	jobcore "github.com/caldera-sh/caldera/pkg/controllers/job/core"
	workv1alpha2 "github.com/caldera-sh/caldera/pkg/federation/karmada/work/v1alpha2"
)

// NewCommand returns `explain`.
func NewCommand(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain (job|podgroup|hyperjob) NAME",
		Short: "Say why a job, PodGroup or HyperJob waits, or how it runs, in plain sentences",
		Long: `Explain reads what Caldera recorded about the object: the PodGroup's
conditions from the scheduler (queue limits, gang shortfalls, node counts
per predicate), caldera-global's hold on its binding when run against the
Karmada API server, the FailedScheduling events of its pods, and a
HyperJob's plan and children.`,
		Example: `  calderactl explain job tensorflow-dist-mnist
  calderactl --kubeconfig karmada.config explain hyperjob llm`,
		Args:      cobra.ExactArgs(2),
		ValidArgs: []string{"job", "podgroup", "hyperjob"},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			ns, err := f.Namespace()
			if err != nil {
				return err
			}
			ctx := cmdutil.Context(cmd)
			var lines []string
			switch strings.ToLower(args[0]) {
			case "job", "jobs", "vcjob", "vcjobs":
				facts, err := jobFacts(ctx, f, c, ns, args[1])
				if err != nil {
					return err
				}
				lines = narrate.Job(facts)
			case "podgroup", "podgroups", "pg":
				pg := &schedulingv1beta1.PodGroup{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: args[1]}, pg); err != nil {
					return fmt.Errorf("reading PodGroup %s/%s: %w", ns, args[1], err)
				}
				facts := &narrate.Facts{Now: f.Now(), PodGroup: pg}
				if facts.Queue, err = queueOf(ctx, c, pg.Spec.Queue); err != nil {
					return err
				}
				if facts.Events, err = events(ctx, c, ns, []types.UID{pg.UID}, ""); err != nil {
					return err
				}
				lines = narrate.Job(facts)
			case "hyperjob", "hyperjobs", "hj":
				hj := &trainingv1alpha1.HyperJob{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: args[1]}, hj); err != nil {
					return fmt.Errorf("reading HyperJob %s/%s: %w", ns, args[1], err)
				}
				var kids batchv1alpha1.JobList
				if err := c.List(ctx, &kids, client.InNamespace(ns), client.MatchingLabels{trainingv1alpha1.HyperJobNameLabel: hj.Name}); err != nil {
					return fmt.Errorf("listing the children of HyperJob %s: %w", hj.Name, err)
				}
				var children []*narrate.Facts
				for _, k := range kids.Items {
					facts, err := jobFacts(ctx, f, c, ns, k.Name)
					if err != nil {
						return err
					}
					children = append(children, facts)
				}
				lines = narrate.HyperJob(f.Now(), hj, children)
			default:
				return fmt.Errorf("cannot explain %q: give job, podgroup or hyperjob", args[0])
			}
			for _, l := range lines {
				fmt.Fprintln(f.Out, l)
			}
			return nil
		},
	}
	return cmd
}

// jobFacts gathers what is known of a job.
func jobFacts(ctx context.Context, f *cmdutil.Factory, c client.Client, ns, name string) (*narrate.Facts, error) {
	// A job that does not exist is an error naming those that do.
	job, err := clijob.Get(ctx, f, c, name)
	if err != nil {
		return nil, err
	}
	facts := &narrate.Facts{Now: f.Now(), Job: job}
	pg := &schedulingv1beta1.PodGroup{}
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobcore.PodGroupName(job)}, pg)
	switch {
	case err == nil:
		facts.PodGroup = pg
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading the PodGroup of job %s: %w", name, err)
	}
	if facts.Queue, err = queueOf(ctx, c, job.Spec.Queue); err != nil {
		return nil, err
	}
	rb := &workv1alpha2.ResourceBinding{}
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-job"}, rb)
	switch {
	case err == nil:
		facts.Binding = rb
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		// Not a Karmada API server, or not bound yet.
	default:
		return nil, fmt.Errorf("reading the binding of job %s: %w", name, err)
	}
	if facts.Events, err = events(ctx, c, ns, []types.UID{job.UID, pg.UID}, job.Name); err != nil {
		return nil, err
	}
	return facts, nil
}

func queueOf(ctx context.Context, c client.Client, name string) (*schedulingv1beta1.Queue, error) {
	if name == "" {
		name = schedulingv1beta1.DefaultQueue
	}
	q := &schedulingv1beta1.Queue{}
	err := c.Get(ctx, client.ObjectKey{Name: name}, q)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return q, err
}

// events are the namespace's events about the objects of these UIDs and
// the pods of the job named ("" for none).
func events(ctx context.Context, c client.Client, ns string, uids []types.UID, job string) ([]corev1.Event, error) {
	want := map[types.UID]bool{}
	for _, u := range uids {
		if u != "" {
			want[u] = true
		}
	}
	if job != "" {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{batchv1alpha1.JobNameKey: job}); err != nil {
			return nil, fmt.Errorf("listing the pods of job %s: %w", job, err)
		}
		for _, p := range pods.Items {
			want[p.UID] = true
		}
	}
	var l corev1.EventList
	if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if want[e.InvolvedObject.UID] {
			out = append(out, e)
		}
	}
	return out, nil
}
