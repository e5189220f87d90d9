package testing

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ddv1alpha1 "github.com/caldera-sh/caldera/apis/datadependency/v1alpha1"
)

// DataSourceClaimWrapper builds a DataSourceClaim.
type DataSourceClaimWrapper struct{ dsc ddv1alpha1.DataSourceClaim }

// MakeDataSourceClaim returns a claim for the given system, type and name of
// data, on behalf of a Volcano Job of the claim's name in the claim's
// namespace.
func MakeDataSourceClaim(name, namespace, system, dataType, dataName string) *DataSourceClaimWrapper {
	return &DataSourceClaimWrapper{dsc: ddv1alpha1.DataSourceClaim{
		TypeMeta: metav1.TypeMeta{
			APIVersion: ddv1alpha1.SchemeGroupVersion.String(),
			Kind:       "DataSourceClaim",
		},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: ddv1alpha1.DataSourceClaimSpec{
			System:         system,
			DataSourceType: dataType,
			DataSourceName: dataName,
			Workload: ddv1alpha1.WorkloadRef{
				APIVersion: "batch.volcano.sh/v1alpha1",
				Kind:       "Job",
				Name:       name,
			},
		},
	}}
}

// Obj returns a copy of the built claim.
func (w *DataSourceClaimWrapper) Obj() *ddv1alpha1.DataSourceClaim { return w.dsc.DeepCopy() }

// Workload sets the workload the claim is for.
func (w *DataSourceClaimWrapper) Workload(apiVersion, kind, namespace, name string) *DataSourceClaimWrapper {
	w.dsc.Spec.Workload = ddv1alpha1.WorkloadRef{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name}
	return w
}

// Attribute sets one attribute.
func (w *DataSourceClaimWrapper) Attribute(key, value string) *DataSourceClaimWrapper {
	if w.dsc.Spec.Attributes == nil {
		w.dsc.Spec.Attributes = map[string]string{}
	}
	w.dsc.Spec.Attributes[key] = value
	return w
}
