// Package datasourceclaim admits datadependency.volcano.sh/v1alpha1
// DataSourceClaims: it makes the workload's namespace explicit and refuses a
// workload reference that cannot name an object or that points into another
// namespace (apis/datadependency/v1alpha1/validation).
package datasourceclaim

import (
	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	ddvalidation "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/validation"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
)

// Webhook defaults (SetDefaults_DataSourceClaim) and validates
// DataSourceClaims.
var Webhook = admit.Stateless[*ddv1alpha1.DataSourceClaim]{
	Kind:        ddv1alpha1.SchemeGroupVersion.WithKind("DataSourceClaim").GroupKind(),
	SetDefaults: ddv1alpha1.SetDefaults_DataSourceClaim,
	Check:       ddvalidation.ValidateDataSourceClaim,
}
