// Package datasource admits datadependency.volcano.sh/v1alpha1 DataSources:
// it fills in the reclaim policy and refuses cluster names no member cluster
// can have (apis/datadependency/v1alpha1/validation).
package datasource

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	ddvalidation "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/validation"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
)

var groupKind = ddv1alpha1.SchemeGroupVersion.WithKind("DataSource").GroupKind()

// Webhook defaults and validates DataSources.
type Webhook struct{}

var (
	_ admission.Defaulter[*ddv1alpha1.DataSource] = Webhook{}
	_ admission.Validator[*ddv1alpha1.DataSource] = Webhook{}
)

// Default applies SetDefaults_DataSource.
func (Webhook) Default(_ context.Context, ds *ddv1alpha1.DataSource) error {
	ddv1alpha1.SetDefaults_DataSource(ds)
	return nil
}

// ValidateCreate checks a new DataSource.
func (Webhook) ValidateCreate(_ context.Context, ds *ddv1alpha1.DataSource) (admission.Warnings, error) {
	return nil, admit.Invalid(groupKind, ds.Name, ddvalidation.ValidateDataSource(ds))
}

// ValidateUpdate checks a changed DataSource.
func (Webhook) ValidateUpdate(_ context.Context, _, ds *ddv1alpha1.DataSource) (admission.Warnings, error) {
	return nil, admit.Invalid(groupKind, ds.Name, ddvalidation.ValidateDataSource(ds))
}

// ValidateDelete allows every deletion.
func (Webhook) ValidateDelete(context.Context, *ddv1alpha1.DataSource) (admission.Warnings, error) {
	return nil, nil
}
