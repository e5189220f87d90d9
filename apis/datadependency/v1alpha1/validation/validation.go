// Package validation checks DataSources and DataSourceClaims for what their
// CRD schemas cannot express. It is pure: it reads only the object it is given.
package validation

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
)

// ValidateDataSourceClaim returns the problems of a claim that the API
// server's schema does not catch: a workload reference that cannot name an
// object, or one into another namespace. A claim steers where its workload
// runs, so it may only steer workloads of its own namespace.
func ValidateDataSourceClaim(dsc *ddv1alpha1.DataSourceClaim) field.ErrorList {
	var errs field.ErrorList
	wlPath := field.NewPath("spec", "workload")
	wl := dsc.Spec.Workload
	if gv, err := schema.ParseGroupVersion(wl.APIVersion); err != nil {
		errs = append(errs, field.Invalid(wlPath.Child("apiVersion"), wl.APIVersion, err.Error()))
	} else if gv.Version == "" {
		errs = append(errs, field.Invalid(wlPath.Child("apiVersion"), wl.APIVersion, "must name a version, for example apps/v1"))
	}
	for _, msg := range validation.IsDNS1123Subdomain(wl.Name) {
		errs = append(errs, field.Invalid(wlPath.Child("name"), wl.Name, msg))
	}
	if wl.Namespace != "" && wl.Namespace != dsc.Namespace {
		errs = append(errs, field.Forbidden(wlPath.Child("namespace"),
			"a claim may only refer to a workload in its own namespace "+dsc.Namespace))
	}
	return errs
}

// ValidateDataSource returns the problems of a DataSource that the API
// server's schema does not catch: cluster names that no member cluster can
// have.
func ValidateDataSource(ds *ddv1alpha1.DataSource) field.ErrorList {
	var errs field.ErrorList
	if ds.Spec.Locality == nil {
		return append(errs, field.Required(field.NewPath("spec", "locality"), ""))
	}
	namesPath := field.NewPath("spec", "locality", "clusterNames")
	for i, name := range ds.Spec.Locality.ClusterNames {
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(namesPath.Index(i), name, msg))
		}
	}
	return errs
}
