package webhook

import (
	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	ddvalidation "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/validation"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
)

// DataSourceClaim defaults (SetDefaults_DataSourceClaim: the workload's
// namespace made explicit) and validates DataSourceClaims, refusing a
// workload reference that cannot name an object or that points into
// another namespace.
var DataSourceClaim = admit.Stateless[*ddv1alpha1.DataSourceClaim]{
	Kind:        ddv1alpha1.SchemeGroupVersion.WithKind("DataSourceClaim").GroupKind(),
	SetDefaults: ddv1alpha1.SetDefaults_DataSourceClaim,
	Check:       ddvalidation.ValidateDataSourceClaim,
}
