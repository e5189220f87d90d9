package datadep

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	"github.com/caldera-sh/caldera/pkg/federation/dispatch"
)

// Constraint is what a claim asks of its workload's placement.
type Constraint = dispatch.DataConstraint

// ConstraintOf is the claim's constraint now: a bound claim's clusters,
// required or preferred; an unbound one holds the workload until its
// resolution timeout from creation, then keeps holding it (fallback Hold)
// or lets it go anywhere (fallback Anywhere).
func ConstraintOf(c *ddv1alpha1.DataSourceClaim, now time.Time) Constraint {
	q := QueryOf(c)
	if c.Status.Phase == ddv1alpha1.DataSourceClaimBound && len(c.Status.ResolvedClusterNames) > 0 {
		clusters := append([]string(nil), c.Status.ResolvedClusterNames...)
		if c.Spec.Placement == ddv1alpha1.DataPlacementPreferred {
			return Constraint{Preferred: clusters}
		}
		return Constraint{Required: clusters}
	}
	timeout := time.Duration(ddv1alpha1.DefaultResolutionTimeoutSeconds) * time.Second
	if c.Spec.ResolutionTimeoutSeconds != nil {
		timeout = time.Duration(*c.Spec.ResolutionTimeoutSeconds) * time.Second
	}
	why := "not resolved yet"
	if cond := meta.FindStatusCondition(c.Status.Conditions, ddv1alpha1.DataSourceClaimReady); cond != nil && cond.Message != "" {
		why = strings.TrimSuffix(cond.Message, ".")
	}
	deadline := c.CreationTimestamp.Add(timeout)
	if now.Before(deadline) {
		return Constraint{Blocked: &dispatch.Hold{Rule: dispatch.RuleData, Message: fmt.Sprintf(
			"claim %s waits for the location of %s (%s); until %s, then fallback %s",
			c.Name, q, why, deadline.UTC().Format(time.RFC3339), fallback(c))}}
	}
	if fallback(c) == ddv1alpha1.DataFallbackAnywhere {
		return Constraint{}
	}
	return Constraint{Blocked: &dispatch.Hold{Rule: dispatch.RuleData, Message: fmt.Sprintf(
		"claim %s: the location of %s is unknown (%s) past its resolution timeout; fallback Hold keeps the job waiting", c.Name, q, why)}}
}

func fallback(c *ddv1alpha1.DataSourceClaim) ddv1alpha1.DataFallback {
	if c.Spec.Fallback == "" {
		return ddv1alpha1.DataFallbackHold
	}
	return c.Spec.Fallback
}

// QueryOf is the claim's query.
func QueryOf(c *ddv1alpha1.DataSourceClaim) Query {
	return Query{System: c.Spec.System, Type: c.Spec.DataSourceType, Name: c.Spec.DataSourceName, Attributes: c.Spec.Attributes}
}

// WorkloadKey identifies a claim's workload as a binding's resource does:
// API group, kind, namespace, name.
func WorkloadKey(c *ddv1alpha1.DataSourceClaim) string {
	ns := c.Spec.Workload.Namespace
	if ns == "" {
		ns = c.Namespace
	}
	return Key(c.Spec.Workload.APIVersion, c.Spec.Workload.Kind, ns, c.Spec.Workload.Name)
}

// Key is a workload's key from its API version, kind, namespace and name;
// the version does not count.
func Key(apiVersion, kind, namespace, name string) string {
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	return group + "/" + kind + "/" + namespace + "/" + name
}
