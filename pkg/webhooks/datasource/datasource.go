// Package datasource admits datadependency.volcano.sh/v1alpha1 DataSources:
// it fills in the reclaim policy and refuses cluster names no member cluster
// can have (apis/datadependency/v1alpha1/validation).
package datasource

import (
	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	ddvalidation "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/validation"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
)

// Webhook defaults (SetDefaults_DataSource) and validates DataSources.
var Webhook = admit.Stateless[*ddv1alpha1.DataSource]{
	Kind:        ddv1alpha1.SchemeGroupVersion.WithKind("DataSource").GroupKind(),
	SetDefaults: ddv1alpha1.SetDefaults_DataSource,
	Check:       ddvalidation.ValidateDataSource,
}
