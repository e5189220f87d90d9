// Package webhook admits the datadependency.volcano.sh/v1alpha1 kinds, each
// judged by the object alone (apis/datadependency/v1alpha1/validation).
package webhook

import (
	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
	ddvalidation "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1/validation"
	"github.com/caldera-sh/caldera/pkg/webhooks/admit"
)

// DataSource defaults (SetDefaults_DataSource: the reclaim policy) and
// validates DataSources, refusing cluster names no member cluster can have.
var DataSource = admit.Stateless[*ddv1alpha1.DataSource]{
	Kind:        ddv1alpha1.SchemeGroupVersion.WithKind("DataSource").GroupKind(),
	SetDefaults: ddv1alpha1.SetDefaults_DataSource,
	Check:       ddvalidation.ValidateDataSource,
}
