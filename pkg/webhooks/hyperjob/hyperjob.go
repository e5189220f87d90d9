// Package hyperjob admits training.volcano.sh/v1alpha1 HyperJobs: it fills in
// the HyperJob defaults (which default every job template as a Job) and
// refuses a HyperJob whose child jobs the member clusters would refuse:
// invalid specs (apis/training/v1alpha1/validation), pod templates that
// could not become pods, and job plugins the job controller could not run.
//
// The templates' queues are not looked up: they name queues of the member
// clusters, which the cluster running this webhook may not have.
//
// On the Karmada API server (caldera-global), the webhook knows the member
// clusters too: it refuses cluster names that are no member's, and a
// maxDomains the HyperJob cannot be split within even with every member
// empty; a HyperJob that does not fit the federation even then is
// admitted with a warning (members may join).
package hyperjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	batchv1alpha1 "github.com/caldera-sh/caldera/apis/batch/v1alpha1"
	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	trainingvalidation "github.com/caldera-sh/caldera/apis/training/v1alpha1/validation"
	jobcore "github.com/caldera-sh/caldera/pkg/controllers/job/core"
	"github.com/caldera-sh/caldera/pkg/federation/inventory"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/federation/split"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
	"github.com/caldera-sh/caldera/pkg/webhooks/job"
)

var groupKind = trainingv1alpha1.SchemeGroupVersion.WithKind("HyperJob").GroupKind()

// Webhook defaults and validates HyperJobs.
type Webhook struct {
	// Members, when set, lists the federation's member clusters.
	Members func(ctx context.Context) ([]clusterv1alpha1.Cluster, error)
	// Pools, when set, knows the members' node pools.
	Pools inventory.Pools
}

var (
	_ admission.Defaulter[*trainingv1alpha1.HyperJob] = &Webhook{}
	_ admission.Validator[*trainingv1alpha1.HyperJob] = &Webhook{}
)

// NewWebhook returns the HyperJob webhook.
func NewWebhook() *Webhook {
	return &Webhook{}
}

// Default applies SetDefaults_HyperJob, on create and update alike (it is
// idempotent), except to replicas: the API server's schema has already
// defaulted an absent one to 1, so a 0 here was written by the user, and
// validation refuses it.
func (w *Webhook) Default(_ context.Context, hj *trainingv1alpha1.HyperJob) error {
	var zero []int
	for i, rj := range hj.Spec.ReplicatedJobs {
		if rj.Replicas == 0 {
			zero = append(zero, i)
		}
	}
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	for _, i := range zero {
		hj.Spec.ReplicatedJobs[i].Replicas = 0
	}
	return nil
}

// ValidateCreate checks a new HyperJob.
func (w *Webhook) ValidateCreate(ctx context.Context, hj *trainingv1alpha1.HyperJob) (admission.Warnings, error) {
	return w.check(ctx, hj)
}

// ValidateUpdate checks a changed HyperJob as a new one.
func (w *Webhook) ValidateUpdate(ctx context.Context, _, hj *trainingv1alpha1.HyperJob) (admission.Warnings, error) {
	return w.check(ctx, hj)
}

func (w *Webhook) check(ctx context.Context, hj *trainingv1alpha1.HyperJob) (admission.Warnings, error) {
	errs := w.validate(hj)
	var warnings admission.Warnings
	if len(errs) == 0 && w.Members != nil {
		members, err := w.Members(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the member clusters: %w", err)
		}
		var more field.ErrorList
		more, warnings = federationErrors(hj, members, w.Pools)
		errs = append(errs, more...)
	}
	return warnings, admit.Invalid(groupKind, hj.Name, errs)
}

// federationErrors checks the HyperJob against the members: its cluster
// names, and whether its split fits maxDomains with every member empty.
func federationErrors(hj *trainingv1alpha1.HyperJob, members []clusterv1alpha1.Cluster, pools inventory.Pools) (field.ErrorList, admission.Warnings) {
	var errs field.ErrorList
	names := make([]string, 0, len(members))
	for _, m := range members {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	for i, rj := range hj.Spec.ReplicatedJobs {
		for j, name := range rj.ClusterNames {
			if !slices.Contains(names, name) {
				errs = append(errs, field.Invalid(field.NewPath("spec", "replicatedJobs").Index(i).Child("clusterNames").Index(j), name,
					fmt.Sprintf("no member cluster has this name (members: %s)", strings.Join(names, ", "))))
			}
		}
	}
	if len(errs) > 0 {
		return errs, nil
	}
	hj = hj.DeepCopy()
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	in, err := split.FromHyperJob(hj)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())}, nil
	}
	empty, poolLabels := inventory.SplitInput(members, pools, true)
	in.PoolLabels = poolLabels
	var inf *split.Infeasible
	if _, err := split.Split(in, empty); !errors.As(err, &inf) {
		return nil, nil
	}
	unbounded := *in
	unbounded.MaxDomains = 0
	p, err := split.Split(&unbounded, empty)
	if err == nil && in.MaxDomains > 0 {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "maxDomains"), in.MaxDomains,
			fmt.Sprintf("the HyperJob needs %d clusters even with every member empty: %s", len(p.Clusters), inf.Error()))}, nil
	}
	return nil, admission.Warnings{fmt.Sprintf("the HyperJob does not fit the federation even with every member empty (%s); it waits until members with room join", inf.Error())}
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *trainingv1alpha1.HyperJob) (admission.Warnings, error) {
	return nil, nil
}

func (w *Webhook) validate(hj *trainingv1alpha1.HyperJob) field.ErrorList {
	var errs field.ErrorList
	for i, rj := range hj.Spec.ReplicatedJobs {
		if rj.Replicas < 1 {
			errs = append(errs, field.Invalid(field.NewPath("spec", "replicatedJobs").Index(i).Child("replicas"), rj.Replicas,
				"must be at least 1: a replicated job makes at least one child job"))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	hj = hj.DeepCopy()
	trainingv1alpha1.SetDefaults_HyperJob(hj)
	errs = trainingvalidation.ValidateHyperJob(hj)
	for i := range hj.Spec.ReplicatedJobs {
		templatePath := field.NewPath("spec", "replicatedJobs").Index(i).Child("templateSpec")
		template := &hj.Spec.ReplicatedJobs[i].TemplateSpec
		child := &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: hj.Namespace, Name: hj.Name}, Spec: *template}
		errs = append(errs, jobcore.ValidatePlugins(child, templatePath.Child("plugins"))...)
		errs = append(errs, job.ValidateTemplates(template, templatePath)...)
	}
	return errs
}
