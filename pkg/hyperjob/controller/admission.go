package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	trainingv1alpha1 "github.com/caldera-sh/caldera/apis/training/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/federation/inventory"
	clusterv1alpha1 "github.com/caldera-sh/caldera/pkg/federation/karmada/cluster/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/hyperjob/split"
)

// Admission returns the HyperJob webhook's check against the federation
// (pkg/hyperjob/webhook.Webhook.Federation): members lists the member
// clusters, pools (nil when unknown) their node pools. It refuses cluster
// names that are no member's and a maxDomains the HyperJob cannot be split
// within even with every member empty, and warns of a HyperJob that does
// not fit the federation even then (members may join).
func Admission(members func(context.Context) ([]clusterv1alpha1.Cluster, error), pools inventory.Pools) func(context.Context, *trainingv1alpha1.HyperJob) (field.ErrorList, []string, error) {
	return func(ctx context.Context, hj *trainingv1alpha1.HyperJob) (field.ErrorList, []string, error) {
		ms, err := members(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("listing the member clusters: %w", err)
		}
		errs, warnings := federationErrors(hj, ms, pools)
		return errs, warnings, nil
	}
}

// federationErrors checks the HyperJob against the members: its cluster
// names, and whether its split fits maxDomains with every member empty.
func federationErrors(hj *trainingv1alpha1.HyperJob, members []clusterv1alpha1.Cluster, pools inventory.Pools) (field.ErrorList, []string) {
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
	empty, poolLabels := splitInput(members, pools, true)
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
	return nil, []string{fmt.Sprintf("the HyperJob does not fit the federation even with every member empty (%s); it waits until members with room join", inf.Error())}
}
