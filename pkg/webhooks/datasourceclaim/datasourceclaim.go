// Package datasourceclaim admits datadependency.volcano.sh/v1alpha1
// DataSourceClaims: it makes the workload's namespace explicit and refuses a
// workload reference that cannot name an object or that points into another
// namespace (apis/datadependency/v1alpha1/validation).
package datasourceclaim

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	ddvalidation "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/validation"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
)

var groupKind = ddv1alpha1.SchemeGroupVersion.WithKind("DataSourceClaim").GroupKind()

// Webhook defaults and validates DataSourceClaims.
type Webhook struct{}

var (
	_ admission.Defaulter[*ddv1alpha1.DataSourceClaim] = Webhook{}
	_ admission.Validator[*ddv1alpha1.DataSourceClaim] = Webhook{}
)

// Default applies SetDefaults_DataSourceClaim.
func (Webhook) Default(_ context.Context, dsc *ddv1alpha1.DataSourceClaim) error {
	ddv1alpha1.SetDefaults_DataSourceClaim(dsc)
	return nil
}

// ValidateCreate checks a new DataSourceClaim.
func (Webhook) ValidateCreate(_ context.Context, dsc *ddv1alpha1.DataSourceClaim) (admission.Warnings, error) {
	return nil, admit.Invalid(groupKind, dsc.Name, ddvalidation.ValidateDataSourceClaim(dsc))
}

// ValidateUpdate checks a changed DataSourceClaim.
func (Webhook) ValidateUpdate(_ context.Context, _, dsc *ddv1alpha1.DataSourceClaim) (admission.Warnings, error) {
	return nil, admit.Invalid(groupKind, dsc.Name, ddvalidation.ValidateDataSourceClaim(dsc))
}

// ValidateDelete allows every deletion.
func (Webhook) ValidateDelete(context.Context, *ddv1alpha1.DataSourceClaim) (admission.Warnings, error) {
	return nil, nil
}
